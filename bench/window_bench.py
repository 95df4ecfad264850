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
asked until it counts it; the day is put back afterwards), and the process's peak RSS.
Then, with a second new reader (the first one dropped) holding a price book of the
synthetic models' prices, what the Overview page now really runs (dashboard/overview.py):
the overview, the cost at API prices (`api_cost`, top 20 names) and the "at a glance"
block (`glance`: the node verdicts over the range and the period before it, read from the
Nodes page's per-day serving partials, the range's refusals, the budgets), in that order:
its cold first view (each part timed, so that the block's added cost is a ratio within
the same view), its warm views (medians, the parts again), and the first Nodes page on
that reader (whose partials the glance block has computed). Results shared between
sessions are switched off: this measures the engine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
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

from bench.synthetic_store import LAB_ZONE, MODELS, build
from contract.store import day_file, stored_days
from etl import rollup
from etl.load import write_day
from queries.filters import Filters
from queries.pages import api_cost, glance, nodes, overview
from queries.runner import StoreReader
from settings.price_book import Price

REPO = Path(__file__).resolve().parent.parent
TOP_NAMES = 20  # the page's api_cost(top_names=config.dashboard.top_names), the default


def _prices() -> tuple[Price, ...]:
    """A price book of the synthetic models at their own prices (no date bounds: no month
    is split), so that the page's "At API prices" queries run as with a price book."""
    return tuple(
        Price(
            m.group,
            f"synthetic/{m.group}",
            m.usd_per_m_in,
            m.usd_per_m_in / 10,
            m.usd_per_m_out,
            dt.date(2026, 12, 1),
        )
        for m in MODELS
    )


def _overview_page(reader: StoreReader, filters: Filters) -> tuple[float, float, float]:
    """The Overview page's result sets in the page's order: the overview, the cost at API
    prices, the glance block; milliseconds of each."""
    began = time.perf_counter()
    overview(reader, filters)
    seen = time.perf_counter()
    api_cost(reader, filters, top_names=TOP_NAMES)
    costed = time.perf_counter()
    glance(reader, filters)
    done = time.perf_counter()
    return (seen - began) * 1000, (costed - seen) * 1000, (done - costed) * 1000


def _rss_mb() -> float:
    """The process's resident memory now (VmRSS), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _count_partials(reader: StoreReader) -> list[int]:
    """A counter of the spans whose Nodes-page partials `reader` computes from now on."""
    computed = [0]
    compute = reader._compute_partials

    def counted(*args: Any, **kwargs: Any) -> Any:
        computed[0] += 1
        return compute(*args, **kwargs)

    reader._compute_partials = counted  # type: ignore[method-assign]
    return computed


def _median_parts(reader: StoreReader, filters: Filters, times: int) -> dict[str, tuple[float, float, float]]:
    """Warm Overview pages with the glance block: the whole, its overview, its added part
    (API cost and glance) and each of these two, each as (median, min, max) in ms."""
    parts = [_overview_page(reader, filters) for _ in range(times)]

    def summary(values: list[float]) -> tuple[float, float, float]:
        return statistics.median(values), min(values), max(values)

    return {
        "whole": summary([sum(p) for p in parts]),
        "overview": summary([p[0] for p in parts]),
        "added": summary([p[1] + p[2] for p in parts]),
        "api_cost": summary([p[1] for p in parts]),
        "glance": summary([p[2] for p in parts]),
    }


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
    out = _plain_pages(store, warm, month, year)
    gc.collect()  # the first reader dropped: the second one's snapshot, caches and partials start empty
    out.update(_overview_with_glance(store, warm, month))
    return out


def _plain_pages(store: Path, warm: int, month: Filters, year: Filters) -> dict[str, Any]:
    """The overview and the Nodes page, a day written, with the process's first reader."""
    last = stored_days(store)[-1]
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


def _overview_with_glance(store: Path, warm: int, month: Filters) -> dict[str, Any]:
    """The Overview page as it now is, with a second new reader (with a price book): cold,
    warm, then the Nodes page on the same reader; and the days' partials each computed."""
    out: dict[str, Any] = {"rss_before_second_reader_mb": _rss_mb()}
    page_reader = StoreReader(store, share_results=False, prices=_prices())
    computed = _count_partials(page_reader)
    out["cold_page_parts_ms"] = _overview_page(page_reader, month)
    out["partials_by_cold_page"] = computed[0]
    out["partials_mb_after_cold_page"] = page_reader._partials._total / 2**20
    warm_parts = _median_parts(page_reader, month, warm)
    out["partials_by_warm_pages"] = computed[0] - out["partials_by_cold_page"]
    out["warm_page_30d_ms"] = warm_parts["whole"]
    out["warm_page_overview_30d_ms"] = warm_parts["overview"]
    out["warm_page_added_30d_ms"] = warm_parts["added"]
    out["warm_page_api_cost_30d_ms"] = warm_parts["api_cost"]
    out["warm_page_glance_30d_ms"] = warm_parts["glance"]
    began = time.perf_counter()
    nodes(page_reader, month)
    out["first_nodes_after_page_ms"] = (time.perf_counter() - began) * 1000
    out["partials_by_nodes_after_page"] = (
        computed[0] - out["partials_by_cold_page"] - out["partials_by_warm_pages"]
    )
    out["peak_rss_end_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
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
        "cold first Overview with the glance block and API cost, 30 days (a second new reader: "
        "overview + API cost + glance)",
        lambda r: "{:,.0f} ms ({:,.0f} + {:,.0f} + {:,.0f})".format(
            sum(r["cold_page_parts_ms"]), *r["cold_page_parts_ms"]
        ),
    )
    row("warm Overview with the glance block and API cost, 30 days", timed("warm_page_30d_ms"))
    row(
        "of which its overview / API cost / glance block (warm medians)",
        lambda r: (
            f"{r['warm_page_overview_30d_ms'][0]:,.0f} / {r['warm_page_api_cost_30d_ms'][0]:,.0f} / "
            f"{r['warm_page_glance_30d_ms'][0]:,.0f} ms"
        ),
    )
    row(
        "first Nodes page, 30 days (its days' partials computed)",
        lambda r: f"{r['first_nodes_30d_ms']:,.0f} ms",
    )
    row("warm Nodes page, 30 days", timed("warm_nodes_30d_ms"))
    row(
        "first Nodes page after the Overview with the glance block (second reader)",
        lambda r: f"{r['first_nodes_after_page_ms']:,.0f} ms",
    )
    row(
        "days' partials computed by that cold Overview / its warm views / that Nodes page",
        lambda r: (
            f"{r['partials_by_cold_page']} ({r['partials_mb_after_cold_page']:,.0f} MB) / "
            f"{r['partials_by_warm_pages']} / {r['partials_by_nodes_after_page']}"
        ),
    )
    row("peak RSS after the overviews", lambda r: f"{r['peak_rss_overview_mb']:,.0f} MB")
    row("peak RSS after the Nodes page", lambda r: f"{r['peak_rss_nodes_mb']:,.0f} MB")
    row("peak RSS of the process (a new day loaded too)", lambda r: f"{r['peak_rss_mb']:,.0f} MB")
    row(
        "peak RSS at the end (the second reader: the Overview with glance, then the Nodes page; "
        "RSS when it started)",
        lambda r: f"{r['peak_rss_end_mb']:,.0f} MB ({r['rss_before_second_reader_mb']:,.0f} MB)",
    )
    row("a day just written shows after", lambda r: f"{r['new_day_visible_s']:.2f} s")
    row("requests in the store / in 30 days", lambda r: f"{r['requests']:,} / {r['requests_30d']:,}")
    for n in sizes:
        r = results[n]
        cold, warm_whole, warm_overview = (
            r["cold_page_parts_ms"],
            r["warm_page_30d_ms"],
            r["warm_page_overview_30d_ms"],
        )
        print(
            f"\n{n:,}: the glance block and API cost make the cold first Overview "
            f"{sum(cold) / cold[0]:.2f}x its overview part ({sum(cold) / r['cold_overview_ms']:.2f}x the "
            f"first reader's cold overview), the warm one {warm_whole[0] / warm_overview[0]:.2f}x "
            f"({warm_whole[0] / r['warm_overview_30d_ms'][0]:.2f}x the first reader's warm overview)"
        )
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
                    ("Overview with glance", "warm_page_30d_ms"),
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
