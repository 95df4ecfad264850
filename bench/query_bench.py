"""Query benchmark: the overview page's queries over 1M synthetic requests, 30 days,
cold and warm, against the same aggregates computed directly in PostgreSQL on
"LiteLLM_SpendLogs" (as LiteLLM's own UI and ad-hoc dashboards do).

    .venv/bin/python -m bench.query_bench --rows 1000000

Uses (or creates) the database of bench/etl_bench.py and loads the store from it with
the ETL. "Cold" is a new reader's first overview: it reads the store into memory.
"Warm" is the median of the following overviews. Both sides compute every panel: the
results the dashboard shares between sessions (queries/shared.py) are switched off here,
so this measures the query engine, not the cache.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import psycopg

from bench.etl_bench import REPO, prepare
from queries.filters import Filters
from queries.pages import NODES_QUERIES, OVERVIEW_QUERIES, nodes, overview
from queries.runner import StoreReader

# The overview's panels straight from LiteLLM's table: what a dashboard without our
# store has to run. Noise is excluded the same way; JSON fields come from metadata.
_NOT_NOISE = """
    api_key NOT IN ('litellm-internal-health-check', 'litellm_proxy_master_key',
                    '2ee659761968def976c7905217d96fa6e765f300dfb066f6c73fd3c279b3435a')
    AND coalesce("user", '') <> 'default_user_id'
    AND coalesce(team_id, '') <> 'litellm-internal-health-check'
"""
_RANGE = '"startTime" >= %(start)s AND "startTime" < %(end)s'
_CACHED = "coalesce((metadata #>> '{usage_object,prompt_tokens_details,cached_tokens}')::bigint, 0)"
_REASONING = "coalesce((metadata #>> '{usage_object,completion_tokens_details,reasoning_tokens}')::bigint, 0)"
_UA = "nullif(metadata ->> 'user_agent', '')"
POSTGRES_OVERVIEW = {
    "totals": f"""
        SELECT count(*), count(*) FILTER (WHERE status = 'failure'), sum(spend), count(DISTINCT "user"),
               sum(prompt_tokens), sum({_CACHED}), sum(completion_tokens), sum({_REASONING}),
               sum(total_tokens), percentile_cont(0.5) WITHIN GROUP (ORDER BY request_duration_ms)
        FROM "LiteLLM_SpendLogs" WHERE {_RANGE} AND {_NOT_NOISE}""",
    "totals_previous": f"""
        SELECT count(*), count(*) FILTER (WHERE status = 'failure'), sum(spend), count(DISTINCT "user"),
               sum(prompt_tokens), sum({_CACHED}), sum(completion_tokens), sum({_REASONING}),
               sum(total_tokens), percentile_cont(0.5) WITHIN GROUP (ORDER BY request_duration_ms)
        FROM "LiteLLM_SpendLogs"
        WHERE "startTime" >= %(previous)s AND "startTime" < %(start)s AND {_NOT_NOISE}""",
    "by_bucket": f"""
        SELECT date_trunc('day', "startTime" AT TIME ZONE 'UTC' AT TIME ZONE 'Asia/Seoul') AS day,
               count(*), count(*) FILTER (WHERE status = 'failure'), sum(spend), sum(total_tokens),
               sum(prompt_tokens - {_CACHED}), sum({_CACHED}), sum(completion_tokens - {_REASONING}),
               sum({_REASONING}), percentile_cont(0.5) WITHIN GROUP (ORDER BY request_duration_ms)
        FROM "LiteLLM_SpendLogs" WHERE {_RANGE} AND {_NOT_NOISE} GROUP BY 1 ORDER BY 1""",
    "by_node": f"""
        SELECT substring(api_base FROM '//([^/]+)'), count(*), sum(total_tokens), sum(spend)
        FROM "LiteLLM_SpendLogs" WHERE {_RANGE} AND {_NOT_NOISE} GROUP BY 1""",
    "by_user": f"""
        SELECT "user", count(*), sum(total_tokens), sum(spend), sum({_CACHED})
        FROM "LiteLLM_SpendLogs" WHERE {_RANGE} AND {_NOT_NOISE} GROUP BY 1""",
    "by_client": f"""
        SELECT {_UA}, count(*), sum(total_tokens), count(DISTINCT "user")
        FROM "LiteLLM_SpendLogs" WHERE {_RANGE} AND {_NOT_NOISE} GROUP BY 1""",
    "by_model": f"""
        SELECT model_group, count(*), sum(total_tokens), sum(spend)
        FROM "LiteLLM_SpendLogs" WHERE {_RANGE} AND {_NOT_NOISE} GROUP BY 1""",
    "user_client_matrix": f"""
        SELECT "user", {_UA}, count(*), sum(total_tokens)
        FROM "LiteLLM_SpendLogs" WHERE {_RANGE} AND {_NOT_NOISE} GROUP BY 1, 2""",
}


# The same without any metadata field (no cached or reasoning tokens, no client): the
# least PostgreSQL can be asked, to show the gap is not only JSON.
def _without_metadata(sql: str) -> str:
    return sql.replace(_CACHED, "0").replace(_REASONING, "0").replace(_UA, "NULL")


POSTGRES_COLUMNS_ONLY = {name: _without_metadata(sql) for name, sql in POSTGRES_OVERVIEW.items()}


def build_store(url: str, store: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "USAGE_", "ETL_"))}
    subprocess.run(
        [sys.executable, "-m", "etl", "run", "--quiet", "--source", url, "--store", str(store)],
        cwd=REPO,
        env=env,
        check=True,
    )


def time_postgres(
    url: str, start: dt.datetime, end: dt.datetime, queries: dict[str, str] = POSTGRES_OVERVIEW
) -> tuple[float, int]:
    params = {"start": start, "end": end, "previous": start - (end - start)}
    began = time.monotonic()
    with psycopg.connect(url) as conn:
        results = {name: conn.execute(sql, params).fetchall() for name, sql in queries.items()}
    return time.monotonic() - began, int(results["totals"][0][0])


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=30, help="the range the overview shows")
    parser.add_argument("--warm", type=int, default=9, help="warm overviews to time (median reported)")
    args = parser.parse_args()

    url = prepare(args.rows, reuse=True)
    store = Path(tempfile.mkdtemp(prefix="usage-query-bench-"))
    try:
        build_store(url, store)
        reader = StoreReader(store, share_results=False)
        newest = reader.run("store_status").iloc[0]["last_request"].to_pydatetime()
        end = newest.replace(minute=0, second=0, microsecond=0) + dt.timedelta(hours=1)
        filters = Filters(start=end - dt.timedelta(days=args.days), end=end, tz="Asia/Seoul")

        rss_before = _rss_mb()
        cold_reader = StoreReader(store, share_results=False)
        began = time.monotonic()
        cold_results = overview(cold_reader, filters)
        cold = time.monotonic() - began
        snapshot_mb = _rss_mb() - rss_before
        warm_times = []
        for _ in range(args.warm):
            began = time.monotonic()
            overview(cold_reader, filters)
            warm_times.append(time.monotonic() - began)
        warm = statistics.median(warm_times)
        nodes(cold_reader, filters)
        node_times = []
        for _ in range(args.warm):
            began = time.monotonic()
            nodes(cold_reader, filters)
            node_times.append(time.monotonic() - began)
        node_parts = sorted(
            ((name, _median_ms(partial(cold_reader.run, name, filters))) for name in NODES_QUERIES),
            key=lambda part: -part[1],
        )
        duck_requests = int(cold_results["totals"].iloc[0]["requests"])

        with psycopg.connect(url) as conn:
            size = conn.execute(
                "SELECT pg_size_pretty(pg_total_relation_size('\"LiteLLM_SpendLogs\"'))"
            ).fetchone()
        pg_first, pg_requests = time_postgres(url, filters.start or end, end)
        pg_second, _ = time_postgres(url, filters.start or end, end)
        pg_columns, _ = time_postgres(url, filters.start or end, end, POSTGRES_COLUMNS_ONLY)
    finally:
        shutil.rmtree(store, ignore_errors=True)

    pg = min(pg_first, pg_second)
    print(
        f"\nOverview benchmark: {args.rows:,} requests ({size[0] if size else '?'} in PostgreSQL), "
        f"{args.days}-day range in Asia/Seoul, {len(OVERVIEW_QUERIES)} result sets, "
        f"{platform.machine()}, {os.cpu_count()} cores, {dt.date.today()}\n"
    )
    print("| where | overview time |")
    print("|---|---:|")
    print(f"| our store, cold (reads the store into memory first) | {cold * 1000:,.0f} ms |")
    print(
        f"| our store, warm (median of {len(warm_times)}: {min(warm_times) * 1000:.0f} to "
        f"{max(warm_times) * 1000:.0f} ms) | {warm * 1000:,.0f} ms |"
    )
    print(
        f"| PostgreSQL on LiteLLM_SpendLogs (best of 2: {pg_first:.1f} s, {pg_second:.1f} s) | {pg:,.1f} s |"
    )
    print(f"| PostgreSQL, without any metadata field (no cached tokens, no client) | {pg_columns:,.1f} s |")
    print(
        f"\nwarm: {pg / warm:,.0f}x faster than PostgreSQL ({pg_columns / warm:,.0f}x faster than "
        f"its metadata-free version); cold: {pg / cold:,.0f}x ({pg_columns / cold:,.0f}x)"
    )
    print(
        f"\nNodes page ({len(NODES_QUERIES)} result sets, same range): warm median of {len(node_times)} "
        f"{statistics.median(node_times) * 1000:,.0f} ms ({min(node_times) * 1000:,.0f} to "
        f"{max(node_times) * 1000:,.0f} ms); slowest result sets: "
        + ", ".join(f"{name} {ms:,.0f} ms" for name, ms in node_parts[:3])
    )
    print(f"requests in range: {duck_requests:,} in the store, {pg_requests:,} in PostgreSQL")
    print(f"memory of the in-memory snapshot (RSS growth on the first overview): {snapshot_mb:,.0f} MB")


def _median_ms(job: Callable[[], object], times: int = 5) -> float:
    taken = []
    for _ in range(times):
        began = time.monotonic()
        job()
        taken.append(time.monotonic() - began)
    return statistics.median(taken) * 1000


if __name__ == "__main__":
    main()
