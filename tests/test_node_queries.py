"""The nodes page's numbers, computed by hand: percentiles, the output-speed exclusion
rule, and requests in flight from overlapping intervals across buckets and range edges.

On node l40-a, from 09:59:50 to 11:00:10 UTC:

    r4 |09:59:50 -------- 10:00:05|                      (began before the range)
    r1      |10:00:00 ------------------------ 10:00:30|
    r2               |10:00:10 -- 10:00:20|
    r3                          |10:00:20 ---------- 10:00:40|   (starts as r2 ends)
    r5                                  ... |10:59:50 -- 11:00:10|   (spans two hours)

and on blackwell r6 at 10:30:00 for one second. The range is 10:00 to 12:00 UTC.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from etl.run import ingest_rows
from queries.filters import Filters
from queries.runner import StoreReader
from settings.config import Config
from tests.known_store import NODES
from tests.litellm_db import spend_log

RANGE = Filters(
    start=dt.datetime(2026, 11, 20, 10, 0, tzinfo=dt.UTC),
    end=dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC),
    tz="UTC",
)


def timed(
    kind: str,
    rid: str,
    start: str,
    end: str,
    *,
    first: str | None,
    completion: int,
    prompt: int,
    day: str = "2026-11-20T",
) -> Any:
    begin = dt.datetime.fromisoformat(start if "T" in start else day + start)
    finish = dt.datetime.fromisoformat(end if "T" in end else day + end)
    row = spend_log(
        kind,
        request_id=rid,
        start=begin,
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        request_duration_ms=int((finish - begin).total_seconds() * 1000),
        metadata={
            "usage_object": {"prompt_tokens_details": {"cached_tokens": 0}},
            "additional_usage_values": None,
        },
    )
    row["endTime"] = finish
    row["completionStartTime"] = dt.datetime.fromisoformat(day + first) if first else finish
    return row


ROWS = [
    timed("llamacpp_non_streamed", "r4", "09:59:50", "10:00:05", first=None, completion=20, prompt=500),
    timed(
        "llamacpp_non_streamed", "r1", "10:00:00", "10:00:30", first="10:00:01", completion=290, prompt=1000
    ),
    timed(
        "llamacpp_non_streamed",
        "r2",
        "10:00:10",
        "10:00:20",
        first="10:00:10.500",
        completion=190,
        prompt=2000,
    ),
    timed(
        "llamacpp_non_streamed", "r3", "10:00:20", "10:00:40", first="10:00:22", completion=10, prompt=3000
    ),
    timed("llamacpp_non_streamed", "r5", "10:59:50", "11:00:10", first=None, completion=100, prompt=4000),
    # blackwell: streamed, but its answer took 150 ms after the first token: too short to time
    timed(
        "vllm_streamed_reasoning_cached",
        "r6",
        "10:30:00",
        "10:30:01",
        first="10:30:00.850",
        completion=50,
        prompt=100,
    ),
]


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> StoreReader:
    store = tmp_path_factory.mktemp("nodes") / "store"
    ingest_rows(Config(store=store, nodes=NODES), ROWS)
    return StoreReader(store)


def by(frame: Any, *keys: str) -> dict[Any, dict[str, Any]]:
    return {tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]]: r for r in frame.to_dict("records")}


def test_node_performance_percentiles_and_the_short_request_rule(reader: StoreReader) -> None:
    nodes = by(reader.run("node_performance", RANGE), "node")
    l40 = nodes["l40-a"]
    assert (l40["requests"], l40["streamed_requests"], l40["failures"]) == (4, 3, 0)  # r4 began before
    assert l40["requests_share"] == pytest.approx(4 / 5)
    assert l40["ttft_p50_ms"] == 1000 and l40["ttft_p95_ms"] == pytest.approx(1900)  # of 500, 1000, 2000
    # r1: 290 tokens in 29 s; r2: 190 in 9.5 s; r3 has 10 tokens: too short to time
    assert l40["output_tps_p50"] == pytest.approx(15.0) and l40["output_tps_p95"] == pytest.approx(19.5)
    assert l40["speed_too_short"] == 1
    assert l40["latency_p50_ms"] == 20000 and l40["latency_p95_ms"] == pytest.approx(28500)
    assert l40["prompt_p50"] == 2500 and l40["prompt_p95"] == pytest.approx(3850)
    blackwell = nodes["blackwell"]
    assert (blackwell["requests"], blackwell["speed_too_short"]) == (1, 1)
    assert blackwell["output_tps_p50"] is None or blackwell["output_tps_p50"] != blackwell["output_tps_p50"]


def test_requests_in_flight_from_overlapping_intervals(reader: StoreReader) -> None:
    rows = by(reader.run("concurrency", RANGE), "node", "bucket")
    ten, eleven = dt.datetime(2026, 11, 20, 10, 0), dt.datetime(2026, 11, 20, 11, 0)
    # 10:00: r4 (begun before the range) and r1; r2 ends as r3 starts: never more than 2
    assert rows[("l40-a", ten)]["peak_in_flight"] == 2
    busy = 5 + 30 + 10 + 20 + 10  # seconds of each request inside 10:00-11:00
    assert rows[("l40-a", ten)]["avg_in_flight"] == pytest.approx(busy / 3600)
    # r5 runs across 11:00: in flight at the start of the 11 o'clock bucket
    assert rows[("l40-a", eleven)]["peak_in_flight"] == 1
    assert rows[("l40-a", eleven)]["avg_in_flight"] == pytest.approx(10 / 3600)
    assert rows[("blackwell", ten)]["peak_in_flight"] == 1
    assert rows[("blackwell", ten)]["avg_in_flight"] == pytest.approx(1 / 3600)
    assert rows[("blackwell", eleven)]["peak_in_flight"] == 0  # idle hours are there, at zero
    assert len(rows) == 4


def test_a_range_that_cuts_a_request_counts_only_its_part_inside(reader: StoreReader) -> None:
    from dataclasses import replace

    tight = replace(RANGE, start=dt.datetime(2026, 11, 20, 10, 0, 15, tzinfo=dt.UTC), bucket="hour")
    rows = by(reader.run("concurrency", tight), "node", "bucket")
    first = rows[("l40-a", dt.datetime(2026, 11, 20, 10, 0))]
    # from 10:00:15: r1 (15 s left), r2 (5 s), r3 (20 s), r5 (10 s), over 59:45 of the hour
    assert first["avg_in_flight"] == pytest.approx((15 + 5 + 20 + 10) / 3585)
    assert first["peak_in_flight"] == 2


def test_latency_against_requests_in_flight(reader: StoreReader) -> None:
    rows = by(reader.run("latency_by_concurrency", RANGE), "node", "in_flight")
    two = rows[("l40-a", 2)]  # r1 (with r4), r2 (with r1), r3 (with r1; r2 just ended)
    assert two["requests"] == 3 and two["latency_p50_ms"] == 20000
    assert two["ttft_p50_ms"] == 1000 and two["output_tps_p50"] == pytest.approx(15.0)
    one = rows[("l40-a", 1)]
    assert (one["requests"], one["latency_p50_ms"]) == (1, 20000)  # r5, alone
    assert rows[("blackwell", 1)]["requests"] == 1
    assert set(rows) == {("l40-a", 1), ("l40-a", 2), ("blackwell", 1)}


def test_speed_over_time_per_node(reader: StoreReader) -> None:
    rows = by(reader.run("node_speed_by_bucket", RANGE), "node", "bucket")
    ten = dt.datetime(2026, 11, 20, 10, 0)
    assert rows[("l40-a", ten)]["requests"] == 4  # r1, r2, r3 and r5 (10:59:50)
    assert rows[("l40-a", ten)]["ttft_p50_ms"] == 1000
    assert rows[("blackwell", ten)]["requests"] == 1
    assert set(rows) == {("l40-a", ten), ("blackwell", ten)}


def test_failures_by_node_and_error_class(tmp_path: Path) -> None:
    from tests import known_store
    from tests.known_store import KST_NOV_21

    reader = StoreReader(known_store.build(tmp_path / "store"))
    failures = reader.run("failures_by_bucket", KST_NOV_21)
    assert [tuple(r) for r in failures[["node", "error_class", "failures"]].itertuples(index=False)] == [
        ("unknown", "ProxyModelNotFoundError", 1)
    ]
    assert failures.iloc[0]["bucket"].hour == 8  # 08:30 in Seoul


def test_a_range_of_whole_days_reads_the_days_partials_and_counts_across_midnight(tmp_path: Path) -> None:
    """Over whole days, with no filter, the Nodes page reads each day's partials
    (queries/serving.py): a request running across midnight is in flight on both days,
    and every figure equals the same read from the requests themselves."""
    from dataclasses import replace

    from queries.pages import NODES_QUERIES
    from queries.runner import days_read, load_sql
    from queries.window import plan

    overnight = [
        timed("llamacpp_non_streamed", "m1", "2026-11-19T23:59:00", "2026-11-20T00:01:00", first=None,
              completion=100, prompt=700),
        timed("llamacpp_non_streamed", "m2", "00:00:30", "00:00:40", first=None, completion=100, prompt=900),
    ]  # fmt: skip
    store = tmp_path / "store"
    ingest_rows(Config(store=store, nodes=NODES), [*ROWS, *overnight])
    reader = StoreReader(store, share_results=False)
    days = Filters(
        start=dt.datetime(2026, 11, 18, tzinfo=dt.UTC), end=dt.datetime(2026, 11, 22, tzinfo=dt.UTC), tz="UTC"
    )
    assert plan(days, "UTC")["nodes"]
    assert all(days_read(load_sql(name), plan(days, "UTC")) == "edges" for name in NODES_QUERIES)

    rows = by(reader.run("concurrency", days), "node", "bucket")
    nov19, nov20 = dt.datetime(2026, 11, 19), dt.datetime(2026, 11, 20)
    assert rows[("l40-a", nov19)]["peak_in_flight"] == 1  # m1's last minute of the 19th
    assert rows[("l40-a", nov19)]["avg_in_flight"] == pytest.approx(60 / 86400)
    assert rows[("l40-a", nov20)]["peak_in_flight"] == 2  # m1 with m2 at 00:00:30; r4 with r1
    busy = 60 + 10 + (15 + 30 + 10 + 20 + 20)  # m1, m2, then r4 r1 r2 r3 r5 whole
    assert rows[("l40-a", nov20)]["avg_in_flight"] == pytest.approx(busy / 86400)
    levels = by(reader.run("latency_by_concurrency", days), "node", "in_flight")
    assert levels[("l40-a", 2)]["requests"] == 4  # m2 (with m1), r1, r2, r3
    # the same figures from the requests: no whole day answered by partials
    raw = replace(days, nodes=("l40-a", "blackwell"))
    assert not plan(raw, "UTC")["nodes"]
    for name in ("concurrency", "failures_by_bucket"):
        assert reader.run(name, days).equals(reader.run(name, raw)), name
    for name in ("node_performance", "node_speed_by_bucket", "latency_by_concurrency"):
        got, exact = reader.run(name, days), reader.run(name, raw)
        assert list(got.columns) == list(exact.columns) and len(got) == len(exact)
        assert (got["requests"] == exact["requests"]).all(), name
        for column in ("latency_p50_ms", "ttft_p50_ms"):  # from bins, within HIST_ACCURACY
            assert got[column].tolist() == pytest.approx(exact[column].tolist(), rel=0.01, nan_ok=True)
