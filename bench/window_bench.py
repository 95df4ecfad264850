"""What a page costs as the store grows: the overview and the Nodes page through the
project's own query API, each store measured in a fresh process.

    .venv/bin/python -m bench.window_bench --rows 1000000 10000000 30000000

For each size, the synthetic store of bench/synthetic_store.py (built once, with its
rollups, under bench/out/). One process per store measures, in this order: the cold
first overview of the last 30 days (a new reader: it loads the store's snapshot first),
the warm overview of the last 30 days and of the whole year, the first Nodes page of the
last 30 days (which computes its days' partials) and then the warm one (medians; the
ranges end at a quarter hour, as the page's rolling ones do),
then how long a day the ETL just wrote takes to show (a new request is written into the
newest day file and its rollup by another process, as a run does, and the reader is
asked until it counts it; the day is put back afterwards), and the process's peak RSS. Results shared
between sessions are switched off: this measures the engine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from bench.synthetic_store import LAB_ZONE, build
from etl import rollup
from etl.load import write_day
from etl.store import day_file, stored_days
from queries.filters import Filters
from queries.pages import nodes, overview
from queries.runner import StoreReader

REPO = Path(__file__).resolve().parent.parent


def _median_ms(job: Callable[[], object], times: int) -> tuple[float, float, float]:
    taken = []
    for _ in range(times):
        began = time.perf_counter()
        job()
        taken.append((time.perf_counter() - began) * 1000)
    return statistics.median(taken), min(taken), max(taken)


def measure(store: Path, warm: int) -> dict[str, Any]:
    """One store, in this process (which must be fresh)."""
    last = stored_days(store)[-1]
    # as the page asks: rolling ranges end at a quarter hour, so both ends cut a day
    end = dt.datetime.combine(last, dt.time(14, 15), dt.UTC)
    month = Filters(start=end - dt.timedelta(days=30), end=end, tz="Asia/Seoul")
    year = Filters(start=end - dt.timedelta(days=365), end=end, tz="Asia/Seoul")
    reader = StoreReader(store, share_results=False)
    began = time.perf_counter()
    first = overview(reader, month)
    cold = (time.perf_counter() - began) * 1000
    out: dict[str, Any] = {"cold_overview_ms": cold, "requests_30d": int(first["totals"].iloc[0]["requests"])}
    out["warm_overview_30d_ms"] = _median_ms(lambda: overview(reader, month), warm)
    out["warm_overview_year_ms"] = _median_ms(lambda: overview(reader, year), warm)
    out["peak_rss_overview_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    began = time.perf_counter()
    nodes(reader, month)  # its first view computes the days' partials (queries/serving.py)
    out["first_nodes_30d_ms"] = (time.perf_counter() - began) * 1000
    out["warm_nodes_30d_ms"] = _median_ms(lambda: nodes(reader, month), max(3, warm // 2))
    out["peak_rss_nodes_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["requests"] = int(reader.run("store_status").iloc[0]["requests"])
    out["new_day_visible_s"] = _new_day_visible(store, reader, last)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _new_day_visible(store: Path, reader: StoreReader, day: dt.date) -> float:
    """Seconds from an ETL-like write of `day` (its file, then its rollup; in a process of
    its own, as the ETL is) to the reader counting the new request; the day's file is
    restored afterwards."""
    path = day_file(store, day)
    backup = path.with_name("bench-backup.parquet")
    shutil.copy2(path, backup)
    try:
        before = int(reader.run("store_status").iloc[0]["requests"])
        _in_a_process("--write-day", str(store), day.isoformat())
        written = time.perf_counter()
        while int(reader.run("store_status").iloc[0]["requests"]) != before + 1:
            if time.perf_counter() - written > 120:
                return float("inf")
            time.sleep(0.02)
        return time.perf_counter() - written
    finally:
        backup.replace(path)
        _in_a_process("--restore-day", str(store), day.isoformat())


def _in_a_process(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "bench.window_bench", *args], cwd=REPO, check=True)


def _write_day(store: Path, day: dt.date) -> None:
    """The day's file with one request more, and its rollup: what an ETL run writes."""
    path = day_file(store, day)
    table = pq.read_table(path)
    extra = table.slice(0, 1).set_column(0, "request_id", pa.array(["bench-new-request"], pa.string()))
    write_day(store, day, pa.concat_tables([table, extra]))
    rollup.build(store, day, LAB_ZONE)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--warm", type=int, default=9, help="warm page loads to time (median reported)")
    parser.add_argument("--store", type=Path, help=argparse.SUPPRESS)  # one store, this process
    parser.add_argument("--write-day", nargs=2, help=argparse.SUPPRESS)  # store, day: as the ETL
    parser.add_argument("--restore-day", nargs=2, help=argparse.SUPPRESS)  # store, day: its rollup
    args = parser.parse_args()
    if args.write_day:
        _write_day(Path(args.write_day[0]), dt.date.fromisoformat(args.write_day[1]))
        return
    if args.restore_day:
        rollup.build(Path(args.restore_day[0]), dt.date.fromisoformat(args.restore_day[1]), LAB_ZONE)
        return
    if args.store:
        print(json.dumps(measure(args.store, args.warm)))
        return
    results = {}
    for rows in args.rows:
        store = build(rows)
        print(f"measuring {store.name} in a fresh process", file=sys.stderr)
        done = subprocess.run(
            [sys.executable, "-m", "bench.window_bench", "--store", str(store), "--warm", str(args.warm)],
            cwd=REPO,
            check=True,
            capture_output=True,
            text=True,
        )
        results[rows] = json.loads(done.stdout.strip().splitlines()[-1])
    print(
        f"\nPage cost by store size: synthetic year stores, 30-day and whole-year windows in Asia/Seoul, "
        f"results sharing off, {platform.machine()}, {os.cpu_count()} cores, {dt.date.today()}\n"
    )
    sizes = list(results)
    print("| | " + " | ".join(f"{n:,} requests" for n in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        print(f"| {label} | " + " | ".join(cell(results[n]) for n in sizes) + " |")

    def timed(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: f"{r[key][0]:,.0f} ms ({r[key][1]:,.0f}-{r[key][2]:,.0f})"

    row("cold first overview, 30 days", lambda r: f"{r['cold_overview_ms']:,.0f} ms")
    row("warm overview, 30 days (median, min-max)", timed("warm_overview_30d_ms"))
    row("warm overview, whole year", timed("warm_overview_year_ms"))
    row(
        "first Nodes page, 30 days (its days' partials computed)",
        lambda r: f"{r['first_nodes_30d_ms']:,.0f} ms",
    )
    row("warm Nodes page, 30 days", timed("warm_nodes_30d_ms"))
    row("peak RSS after the overviews", lambda r: f"{r['peak_rss_overview_mb']:,.0f} MB")
    row("peak RSS after the Nodes page", lambda r: f"{r['peak_rss_nodes_mb']:,.0f} MB")
    row("peak RSS of the process (a new day loaded too)", lambda r: f"{r['peak_rss_mb']:,.0f} MB")
    row("a day just written shows after", lambda r: f"{r['new_day_visible_s']:.2f} s")
    row("requests in the store / in 30 days", lambda r: f"{r['requests']:,} / {r['requests_30d']:,}")
    if len(sizes) > 1:
        base = results[sizes[0]]
        for n in sizes[1:]:
            r = results[n]
            ratios = ", ".join(
                f"{label} {r[key][0] / base[key][0]:.2f}x"
                for label, key in (
                    ("overview 30 days", "warm_overview_30d_ms"),
                    ("overview year", "warm_overview_year_ms"),
                    ("Nodes", "warm_nodes_30d_ms"),
                )
            )
            rss = r["peak_rss_mb"] / base["peak_rss_mb"]
            rss_overview = r["peak_rss_overview_mb"] / base["peak_rss_overview_mb"]
            print(
                f"\n{n:,} against {sizes[0]:,}: {ratios}, peak RSS {rss:.2f}x "
                f"(after the overviews {rss_overview:.2f}x)"
            )


if __name__ == "__main__":
    main()
