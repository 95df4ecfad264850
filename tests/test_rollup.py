"""Rollups: each day's requests summed per group, written by the ETL, never used stale,
and every number read from them equal to the same query over the requests themselves."""

from __future__ import annotations

import datetime as dt
import math
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract.measures import HIST_ACCURACY, METRICS
from contract.rollups import Source
from contract.store import ROLLUPS_DIR, day_file, stored_days
from etl import demo, rollup
from etl.load import write_day
from queries import day_cache
from queries.filters import Filters
from queries.pages import NODES_QUERIES
from queries.runner import StoreReader, load_sql, query_names, with_defaults
from queries.window import empty_day, query_for
from tests.test_queries import EXAMPLE_PARAMS

REPO = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 12, 3, 3, 0, tzinfo=dt.UTC)
ZONE = "Asia/Seoul"  # the display zone of Config() (dashboard.timezone)
LAB_DAYS = 75
ZONES = ("UTC", "Asia/Seoul", "Asia/Kolkata", "Asia/Kathmandu", "America/New_York", "Australia/Adelaide")
# the queries that read rollups, and the views their raw twins read instead
SUMS = {"scoped_sums": "scoped", "in_scope_sums": "in_scope"}
ROLLUP_QUERIES = sorted(
    n for n in query_names() if any(v in load_sql(n) for v in SUMS) or n == "by_bucket" or n in NODES_QUERIES
)
# from the series and the Nodes page's partials: within HIST_ACCURACY of the exact value
# (load_table's judged_p95_ms is one of them: its TTFT or latency p95)
PERCENTILES = {m.name for m in METRICS if m.per_request} | {"judged_p95_ms"}
PARAMS: dict[str, dict[str, Any]] = {
    "key_lookup": {"key_hash": "0" * 64},
    "student_keys": {"user_id": "minji.park"},
    "peers": {"own_keys": [], "named": True, "by": "spend"},
}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The simulated lab's last 75 days, written by the ETL's own code: whole calendar
    months (which readers merge) and days older than the ones they keep in memory."""
    store = tmp_path_factory.mktemp("rollup") / "store"
    demo.build(store, now=NOW, days=LAB_DAYS)
    return store


def test_every_day_has_a_rollup_equal_to_its_requests_summed(lab: Path) -> None:
    assert rollup.missing(lab, ZONE) == []
    for day in stored_days(lab)[::7]:
        source = Source.of(lab, day)
        assert source is not None
        stored = pq.read_table(source.rollup_path(lab)).to_pandas()
        path = day_file(lab, day)
        expected = (
            duckdb.connect()
            .execute(
                f"""SELECT "user", node, status, count(*) AS n, sum(spend) AS spend_sum,
                       sum(prompt_tokens) AS prompt_sum, max(start_time) AS last_start
                FROM read_parquet('{path}') GROUP BY ALL"""
            )
            .df()
        )
        got = stored.groupby(["user", "node", "status"], as_index=False).agg(
            n=("n", "sum"),
            spend_sum=("spend_sum", "sum"),
            prompt_sum=("prompt_sum", "sum"),
            last_start=("last_start", "max"),
        )
        merged = expected.merge(got, on=["user", "node", "status"], suffixes=("", "_rollup"))
        assert len(merged) == len(expected) == len(got)
        assert (merged["n"] == merged["n_rollup"]).all()
        assert (merged["prompt_sum"] == merged["prompt_sum_rollup"]).all()
        assert (merged["last_start"] == merged["last_start_rollup"]).all()
        assert (
            (merged["spend_sum"] - merged["spend_sum_rollup"]).abs() <= 1e-9 * merged["spend_sum"].abs()
        ).all()
        assert stored["n"].sum() == pq.read_metadata(path).num_rows > len(stored)  # every request, fewer rows


def test_a_rollup_older_than_its_day_file_is_never_read(lab: Path, tmp_path: Path) -> None:
    import shutil

    store = tmp_path / "store"
    shutil.copytree(lab, store)
    day = stored_days(store)[-3]
    before = int(StoreReader(store).run("totals").iloc[0]["requests"])
    table = pq.read_table(day_file(store, day))
    write_day(store, day, table.slice(0, 10))  # the day loses rows; its rollup is now stale
    assert rollup.missing(store, ZONE) == [day]
    lost = table.num_rows - 10
    assert int(StoreReader(store).run("totals").iloc[0]["requests"]) == before - lost
    rollup.ensure(store, ZONE)
    assert rollup.missing(store, ZONE) == []
    assert (
        len(list((store / ROLLUPS_DIR / f"date={day}").iterdir())) == 2
    )  # the old rollup and series are gone


def test_the_rollup_command_builds_what_is_missing_resumably(lab: Path, tmp_path: Path) -> None:
    import shutil

    store = tmp_path / "store"
    shutil.copytree(lab, store)
    shutil.rmtree(store / ROLLUPS_DIR)  # a store from before rollups
    expected = StoreReader(lab).run("by_user")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "etl", "rollup", "--store", str(store), *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    done = cli()
    assert done.returncode == 0, done.stderr
    days = len(stored_days(store))
    assert f"rollups: {days:,} built" in done.stdout and "0 days without one" in done.stdout
    again = cli()
    assert again.returncode == 0 and "rollups: 0 built" in again.stdout  # idempotent
    assert cli("--all").stdout.startswith(f"rollups: {days:,} built")
    pd.testing.assert_frame_equal(StoreReader(store).run("by_user"), expected)
    missing = cli("--store", str(tmp_path / "nowhere"))
    assert missing.returncode == 73 and "there is no store" in missing.stderr


def _raw_twin(reader: StoreReader, name: str, filters: Filters) -> pd.DataFrame:
    """The same SQL file over single requests, of every day file, instead of rollups and
    series (by_bucket itself, never by_bucket_days)."""
    sql = load_sql(name)
    for sums, raw in SUMS.items():
        sql = sql.replace(sums, raw)
    everything = [str(empty_day()), *(str(day_file(reader.store, d)) for d in stored_days(reader.store))]
    with reader.cursor(filters) as cur:
        cur.register("window_cached", day_cache.SCHEMA.empty_table())
        cur.execute("SET VARIABLE window_files = $f", {"f": everything})
        cur.execute("SET VARIABLE plan = $p", {"p": {"series": False, "days": False, "nodes": False}})
        cur.execute("SET VARIABLE whole = $w", {"w": {"start": filters.end, "stop": filters.end}})
        return cur.execute(sql, with_defaults(sql, PARAMS.get(name, {})) or None).df()


def assert_same(got: pd.DataFrame, expected: pd.DataFrame, label: str) -> None:
    assert list(got.columns) == list(expected.columns), label
    assert len(got) == len(expected), label
    for column in got.columns:
        for a, b in zip(got[column], expected[column], strict=True):
            if column in PERCENTILES and not (pd.isna(a) and pd.isna(b)):
                assert abs(a - b) <= HIST_ACCURACY * abs(b) + 1e-9, (label, column, a, b)
            elif isinstance(a, float) and isinstance(b, float) and not (math.isnan(a) and math.isnan(b)):
                assert a == pytest.approx(b, rel=1e-9, abs=1e-12), (label, column)
            elif not (pd.isna(a) and pd.isna(b)):
                assert a == b, (label, column, a, b)


@st.composite
def filters(draw: st.DrawFn, dims: dict[str, list[str]], keys: list[str]) -> Filters:
    first = NOW - dt.timedelta(days=LAB_DAYS + 2)
    slot = draw(st.integers(0, (LAB_DAYS + 4) * 96)) * dt.timedelta(minutes=15)
    jitter = draw(
        st.sampled_from([dt.timedelta(0), dt.timedelta(0), dt.timedelta(seconds=draw(st.integers(1, 899)))])
    )
    length = draw(st.sampled_from([1, 4, 24, 48, 7 * 24, 30 * 24, 45 * 24, 70 * 24])) * dt.timedelta(hours=1)
    start = first + slot + jitter

    def some(values: list[str]) -> tuple[str, ...]:
        return tuple(draw(st.lists(st.sampled_from(values), max_size=2, unique=True))) if values else ()

    chosen = draw(st.sampled_from(["users", "models", "nodes", "clients", "statuses", None, None]))
    only = draw(st.sampled_from([None, None, tuple(keys[:1]), tuple(keys[2:4])]))
    unfiltered = Filters(
        start=start, end=start + length, tz=draw(st.sampled_from([*ZONES, ZONE, ZONE])), only_keys=only
    )
    narrowed: dict[str, Any] = {chosen: some(dims[chosen])} if chosen else {}
    return replace(unfiltered, **narrowed)


def test_every_rollup_query_equals_its_twin_over_the_requests(lab: Path) -> None:
    reader = StoreReader(lab, share_results=False)
    dimensions = reader.run("dimensions")
    dims = {
        f"{d}s": sorted(dimensions.loc[dimensions["dimension"] == d, "value"])
        for d in ("user", "model", "node", "client")
    }
    dims["statuses"] = ["success", "failure"]
    keys = sorted(reader.run("budgets")["api_key_hash"])

    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(filters(dims, keys))
    def check(f: Filters) -> None:
        for name in ROLLUP_QUERIES:
            assert_same(
                reader.run(name, f, **PARAMS.get(name, {})), _raw_twin(reader, name, f), f"{name} {f}"
            )

    check()
    # whole calendar months (read merged), and older days than the reader keeps in memory
    autumn = Filters(
        start=dt.datetime(2026, 9, 21, 7, tzinfo=dt.UTC), end=dt.datetime(2026, 12, 1, tzinfo=dt.UTC), tz=ZONE
    )
    snap = reader._snapshot()
    assert {dt.date(2026, 10, 1), dt.date(2026, 11, 1)} <= set(snap.months)
    assert min(snap.day_rollups) > dt.date(2026, 9, 23)  # those days are read from their files
    for name in ROLLUP_QUERIES:
        got = reader.run(name, autumn, **PARAMS.get(name, {}))
        assert_same(got, _raw_twin(reader, name, autumn), f"{name} {autumn}")
    assert {"totals", "by_user", "by_node", "by_client", "by_model", "peers", "dimensions"} <= set(
        ROLLUP_QUERIES
    )
    # the lab's usual view, by day in its own zone, surely from the series
    month = Filters(start=NOW - dt.timedelta(days=30), end=NOW, tz=ZONE)
    assert query_for("by_bucket", month, ZONE) == "by_bucket_days"
    for name in ("by_bucket", "totals"):
        got, exact = reader.run(name, month), _raw_twin(reader, name, month)
        assert_same(got, exact, name)
        assert got["requests"].sum() > 1000 and got["latency_p50_ms"].notna().all()


def test_a_damaged_rollup_is_replaced_by_summing_its_day_file(lab: Path, tmp_path: Path) -> None:
    import shutil

    store = tmp_path / "store"
    shutil.copytree(lab, store)
    expected = StoreReader(lab).run("by_user")
    day = stored_days(store)[-2]
    source = Source.of(store, day)
    assert source is not None
    source.rollup_path(store).write_bytes(b"not parquet")
    pd.testing.assert_frame_equal(StoreReader(store).run("by_user"), expected)


@pytest.mark.parametrize("name", query_names())
def test_a_query_said_to_read_no_requests_gives_the_same_with_them(lab: Path, name: str) -> None:
    """The runner skips loading the range's requests for queries that do not read them
    (queries/runner.py days_read): were it wrong, a number would silently drop."""
    reader = StoreReader(lab, share_results=False)
    params = {**EXAMPLE_PARAMS, **PARAMS}.get(name, {})
    for f in (
        Filters(start=NOW - dt.timedelta(days=9, hours=5), end=NOW, tz=ZONE),
        Filters(users=("minji.park",)),
    ):
        resolved = reader.resolve(f)
        with reader.cursor(resolved) as cur:  # with every request of the range
            sql = load_sql(query_for(name, resolved, ZONE))
            expected = cur.execute(sql, with_defaults(sql, params) or None).df()
        assert_same(reader.run(name, f, **params), expected, f"{name} {f}")


def test_a_rewritten_day_is_computed_again_in_its_nodes_partials_and_month(
    lab: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Nodes page's partials of a day are kept under its day file's fingerprint (and
    the one of the day before), a month's merged rollups under those of its days: when
    the ETL rewrites a day, the pages show the new day, never what was derived from the
    old one."""
    import shutil
    import time

    monkeypatch.setattr("queries.runner.RECHECK_S", 0.0)
    store = tmp_path / "store"
    shutil.copytree(lab, store)
    reader = StoreReader(store, share_results=False)
    month = Filters(start=NOW - dt.timedelta(days=20), end=NOW - dt.timedelta(days=2), tz=ZONE)
    before = {name: reader.run(name, month) for name in NODES_QUERIES}
    october = Filters(
        start=dt.datetime(2026, 9, 30, 15, tzinfo=dt.UTC),
        end=dt.datetime(2026, 11, 1, tzinfo=dt.UTC),
        tz=ZONE,
    )
    october_before = reader.run("totals", october)
    for day in ((NOW - dt.timedelta(days=10)).date(), dt.date(2026, 10, 2)):  # recent, and in a month
        rows = pq.read_table(day_file(store, day))
        write_day(store, day, rows.slice(0, rows.num_rows // 2))  # as a run rewriting the day would
    deadline = time.monotonic() + 20
    while (
        reader.run("node_performance", month)["requests"].sum()
        == before["node_performance"]["requests"].sum()
    ):
        assert time.monotonic() < deadline, "the rewritten day never showed"
        time.sleep(0.05)
    for name in NODES_QUERIES:
        got = reader.run(name, month)
        assert_same(got, _raw_twin(reader, name, month), name)
    assert not reader.run("node_performance", month).equals(before["node_performance"])
    # the month of the other day is merged again
    for name in ("totals", "by_user", "by_node"):
        assert_same(reader.run(name, october), _raw_twin(reader, name, october), name)
    assert reader.run("totals", october)["requests"][0] < october_before["requests"][0]
