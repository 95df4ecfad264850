"""ETL benchmark: full load rows/s, an incremental run with nothing new, one with new
rows, and the peak memory of each, against N synthetic rows in a real LiteLLM schema;
and the full load against PostgreSQL's own `COPY (extraction query) TO STDOUT`, the
least any reader of those rows pays (run in turns with the loads, ratio per pair).

    .venv/bin/python -m bench.etl_bench --rows 200000

It creates (or, with --reuse, keeps) the database usage_bench_<rows> on the local
PostgreSQL, applies LiteLLM's migrations, fills it, and runs `python -m etl run` as a
separate process, as cron would. Results print as a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg import sql

from bench.synthetic import insert_synthetic
from etl import extract
from tests.litellm_db import admin, migration_dirs, url_for

REPO = Path(__file__).resolve().parent.parent


@dataclass
class Measured:
    label: str
    seconds: float
    peak_rss_mb: float
    summary: str


def prepare(rows: int, reuse: bool) -> str:
    name = f"usage_bench_{rows}"
    with admin() as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if exists and reuse:
            with psycopg.connect(url_for(name)) as db:
                # drop the rows an earlier benchmark added for its last incremental run
                db.execute('DELETE FROM "LiteLLM_SpendLogs" WHERE request_id > %s', [f"bench-{rows:010d}"])
                db.commit()
                have = db.execute('SELECT count(*) FROM "LiteLLM_SpendLogs"').fetchone()
            if have and have[0] == rows:
                print(f"reusing {name} ({rows:,} rows)", file=sys.stderr)
                return url_for(name)
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(url_for(name), autocommit=True) as db:
        for d in migration_dirs():
            db.execute((d / "migration.sql").read_text(encoding="utf-8"))
    print(f"filling {name} with {rows:,} synthetic rows", file=sys.stderr)
    with psycopg.connect(url_for(name)) as db:
        insert_synthetic(db, rows, report=lambda s: print(s, file=sys.stderr))
    with psycopg.connect(url_for(name), autocommit=True) as db:
        db.execute('VACUUM ANALYZE "LiteLLM_SpendLogs"')
    return url_for(name)


def copy_seconds(url: str) -> float:
    """PostgreSQL computing and sending every row of the ETL's extraction query, read and
    dropped: the same SELECT, session settings and connection the ETL uses."""
    source = extract.parse_source_url(url)
    with extract.connect(source) as db:
        info = extract.inspect_source(db, source.database or "")
        query, _ = extract.spend_logs_query(info, None)
        began = time.monotonic()
        with db.cursor().copy(sql.SQL("COPY ({}) TO STDOUT").format(query)) as copy:
            for _ in copy:
                pass
        return time.monotonic() - began


def etl(url: str, store: Path, label: str) -> Measured:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "USAGE_", "ETL_"))}
    began = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "etl", "run", "--source", url, "--store", str(store)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - began
    out = proc.stdout.read() if proc.stdout else ""
    err = proc.stderr.read() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{label}: the ETL failed:\n{err}")
    return Measured(label, seconds, usage.ru_maxrss / 1024, out.strip())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--new", type=int, default=1_000, help="rows added before the last incremental run")
    parser.add_argument(
        "--reuse", action="store_true", help="keep a database already filled with --rows rows"
    )
    parser.add_argument("--repeat", type=int, default=3, help="full loads to time (the median is reported)")
    args = parser.parse_args()

    url = prepare(args.rows, args.reuse)
    with psycopg.connect(url) as db:
        size = db.execute("SELECT pg_size_pretty(pg_total_relation_size('\"LiteLLM_SpendLogs\"'))").fetchone()
    stores = [Path(tempfile.mkdtemp(prefix="usage-bench-store-")) for _ in range(args.repeat)]
    try:
        # the machine is shared: repeat the full load into fresh stores, report the median,
        # each right after a COPY of the same rows (their ratio holds when timings drift)
        pairs = [(copy_seconds(url), etl(url, store, "full load")) for store in stores]
        loads = sorted((load for _, load in pairs), key=lambda m: m.seconds)
        full = loads[len(loads) // 2]
        ratios = sorted(load.seconds / copied for copied, load in pairs)
        copies = sorted(copied for copied, _ in pairs)
        store = stores[0]
        nothing = etl(url, store, "incremental, nothing new")
        with psycopg.connect(url) as db:
            insert_synthetic(db, args.new, first_id=args.rows + 1, days=0.001)
        new = etl(url, store, f"incremental, {args.new:,} new rows")
        store_mb = sum(p.stat().st_size for p in store.rglob("*") if p.is_file()) / 1e6
    finally:
        for store in stores:
            shutil.rmtree(store, ignore_errors=True)

    read = int(full.summary.split(" rows read")[0].split()[-1].replace(",", ""))
    print(
        f"\nETL benchmark: {args.rows:,} rows ({size[0] if size else '?'} in PostgreSQL), "
        f"{platform.machine()}, {os.cpu_count()} cores, {dt.date.today()}\n"
    )
    print("| run | seconds | rows/s | peak RSS |")
    print("|---|---:|---:|---:|")
    spread = (
        f" (median of {len(loads)}: {loads[0].seconds:.1f} to {loads[-1].seconds:.1f})"
        if len(loads) > 1
        else ""
    )
    rate = read / full.seconds
    print(f"| full load{spread} | {full.seconds:.2f} | {rate:,.0f} | {full.peak_rss_mb:,.0f} MB |")
    for m in (nothing, new):
        print(f"| {m.label} | {m.seconds:.2f} | — | {m.peak_rss_mb:,.0f} MB |")
    print(
        f"| PostgreSQL's COPY of the extraction query (median of {len(copies)}) | "
        f"{copies[len(copies) // 2]:.2f} | {read / copies[len(copies) // 2]:,.0f} | — |"
    )
    print(
        f"\nfull load against COPY, per pair: {', '.join(f'{r:.2f}x' for r in ratios)} "
        f"(median {ratios[len(ratios) // 2]:.2f}x)"
    )
    print(f"\nstore size: {store_mb:,.1f} MB; full load: {full.summary}")


if __name__ == "__main__":
    main()
