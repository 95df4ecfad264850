"""Every query's exact numbers over a store with known content, written by the ETL itself.

The lab's day in Seoul (UTC+9) starts at 15:00 UTC: the rows straddle that line so that
bucketing by the display time zone, not by UTC, is what the tests check.

One module because it is the known store's exact numbers, query by query, over one
fixture that the other query tests import.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from contract.measures import BY_NAME, METRICS
from etl.run import ingest_rows
from queries import snapshot
from queries.filters import Filters, InvalidFilter
from queries.pages import overview
from queries.runner import StoreReader, UnknownQuery, query_names
from settings.config import Config
from tests import known_store
from tests.known_store import KST_NOV_21, NODES, ROWS, SEOUL, UTC
from tests.litellm_db import spend_log


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("queries") / "store"
    summary = ingest_rows(Config(store=path, nodes=NODES), ROWS)
    assert (summary.rows_written, summary.dropped["health_check"], summary.dropped["master_key"]) == (5, 1, 1)
    return path


@pytest.fixture(scope="module")
def reader(store: Path) -> StoreReader:
    return StoreReader(store)


def one(df: pd.DataFrame) -> dict[str, Any]:
    assert len(df) == 1
    return dict(df.iloc[0])


def test_totals_of_the_seoul_day(reader: StoreReader) -> None:
    totals = reader.run("totals", KST_NOV_21)
    t = one(totals)
    assert (t["requests"], t["failures"], t["active_users"]) == (3, 1, 2)
    assert t["success_rate"] == pytest.approx(2 / 3)
    assert t["spend_usd"] == pytest.approx(0.020 + 0.00025662)
    assert (t["prompt_tokens"], t["cached_tokens"], t["uncached_prompt_tokens"]) == (3973, 1000, 2973)
    assert (t["completion_tokens"], t["reasoning_tokens"], t["answer_tokens"]) == (976, 0, 976)
    assert t["total_tokens"] == 4949
    assert t["cache_hit_rate"] == pytest.approx(1000 / 3973)
    assert t["latency_avg_ms"] == pytest.approx((4000 + 24 + 12033) / 3)
    assert t["latency_p50_ms"] == 4000
    # counts stay whole numbers (DuckDB's SUM of BIGINT would arrive as a float)
    assert all(totals[k].dtype == "int64" for k in ("requests", "failures", "prompt_tokens", "total_tokens"))


def test_totals_compared_with_the_previous_period(reader: StoreReader) -> None:
    both = reader.compare("totals", KST_NOV_21).set_index("period")
    assert both.loc["current", "requests"] == 3
    previous = both.loc["previous"]  # KST Nov 20: only a1 (e1 is on Nov 19)
    assert (previous["requests"], previous["total_tokens"], previous["reasoning_tokens"]) == (1, 1300, 100)
    assert (previous["cached_tokens"], previous["answer_tokens"]) == (200, 200)
    assert previous["spend_usd"] == pytest.approx(0.010)
    assert KST_NOV_21.previous().start == dt.datetime(2026, 11, 19, 15, 0, tzinfo=UTC)


def test_every_metric_in_the_catalogue(store: Path) -> None:
    """Each macro over the three requests of the Seoul day (b1 streamed; c1 and d1 not)."""
    expected = {
        "requests": 3,
        "failures": 1,
        "successes": 2,
        "success_rate": 2 / 3,
        "failure_rate": 1 / 3,
        "spend_usd": 0.02025662,
        "active_users": 2,
        "prompt_tokens": 3973,
        "cached_tokens": 1000,
        "uncached_prompt_tokens": 2973,
        "completion_tokens": 976,
        "reasoning_tokens": 0,
        "answer_tokens": 976,
        "total_tokens": 4949,
        "cache_hit_rate": 1000 / 3973,
        "latency_avg_ms": 16057 / 3,
        "latency_p50_ms": 4000,
        "latency_p95_ms": 4000 + 0.9 * (12033 - 4000),  # linear interpolation
        "prompt_p50": 1973,
        "prompt_p95": 1973 + 0.9 * (2000 - 1973),
        "streamed_requests": 1,
        "speed_too_short": 0,
        "ttft_p50_ms": 800,
        "ttft_p95_ms": 800,
        "output_tps_p50": 400 / 3.2,  # 400 tokens in the 3.2 s after the first one
        "output_tps_p95": 400 / 3.2,
        # b1 and d1 carry the router's record (c1 failed before routing): d1 one fallback
        # after two retries, 12.5 ms in LiteLLM; b1 was streamed, which LiteLLM does not time
        "routing_known": 2,
        "fallback_requests": 1,
        "retried_requests": 1,
        "retries": 2,
        "overhead_p50_ms": 12.5,
        "overhead_p95_ms": 12.5,
    }
    assert set(expected) == {m.name for m in METRICS}
    with StoreReader(store).cursor(KST_NOV_21) as cur:
        for name, value in expected.items():
            row = cur.execute(f"SELECT metric.{name}(r) FROM scoped r").fetchone()
            assert row is not None and row[0] == pytest.approx(value), name
            if not BY_NAME[name].per_request:  # the same from the rollups
                row = cur.execute(f"SELECT metric.{name}(r) FROM scoped_sums r").fetchone()
                assert row is not None and row[0] == pytest.approx(value), name


def test_hourly_buckets_follow_seoul_time_and_include_empty_hours(reader: StoreReader) -> None:
    series = reader.run("by_bucket", KST_NOV_21)
    assert KST_NOV_21.bucket_size == "hour"
    assert len(series) == 24
    assert series["bucket"].iloc[0] == pd.Timestamp("2026-11-21 00:00")
    busy = series[series["requests"] > 0].set_index("bucket")
    assert [b.hour for b in busy.index] == [0, 8, 10]
    assert list(busy["failures"]) == [0, 1, 0] and list(busy["successes"]) == [1, 0, 1]
    assert busy.loc["2026-11-21 00:00", "cached_tokens"] == 1000
    assert busy.loc["2026-11-21 10:00", "uncached_prompt_tokens"] == 1973
    quiet = series[series["requests"] == 0]
    assert (quiet["spend_usd"] == 0).all() and (quiet["total_tokens"] == 0).all()
    assert quiet["cache_hit_rate"].isna().all() and quiet["latency_p50_ms"].isna().all()


def test_the_same_instants_bucketed_by_day_in_seoul_and_in_utc(reader: StoreReader) -> None:
    start, end = dt.datetime(2026, 11, 19, 15, 0, tzinfo=UTC), dt.datetime(2026, 11, 22, 15, 0, tzinfo=UTC)
    seoul = reader.run("by_bucket", Filters(start=start, end=end, tz=SEOUL))
    utc = reader.run("by_bucket", Filters(start=start, end=end, tz="UTC"))
    assert [str(d.date()) for d in seoul["bucket"]] == ["2026-11-20", "2026-11-21", "2026-11-22"]
    assert list(seoul["requests"]) == [1, 3, 0]
    assert [str(d.date()) for d in utc["bucket"]] == ["2026-11-19", "2026-11-20", "2026-11-21", "2026-11-22"]
    assert list(utc["requests"]) == [0, 3, 1, 0]
    # tokens by kind add up to all tokens in every bucket
    kinds = seoul[["uncached_prompt_tokens", "cached_tokens", "answer_tokens", "reasoning_tokens"]].sum(
        axis=1
    )
    assert list(kinds) == list(seoul["total_tokens"]) == [1300, 4949, 0]


@pytest.mark.parametrize(
    ("narrowed", "request_ids"),
    [
        ({"users": ("bob",)}, {"c1", "d1"}),
        ({"nodes": ("l40-a",)}, {"d1"}),
        ({"nodes": ("unknown",)}, {"c1"}),
        ({"clients": ("Claude Code",)}, {"b1"}),
        ({"clients": ("unknown",)}, {"c1"}),
        ({"models": ("unknown-model",)}, {"c1"}),
        ({"models": ("gpt-oss-120b", "qwen3-coder-30b")}, {"b1", "d1"}),
        ({"statuses": ("failure",)}, {"c1"}),
        ({"users": ("alice",), "statuses": ("failure",)}, set()),
        ({"users": ("nobody",)}, set()),
    ],
)
def test_a_filter_on_each_dimension(
    reader: StoreReader, narrowed: dict[str, Any], request_ids: set[str]
) -> None:
    tokens = {"b1": 2400, "c1": 0, "d1": 2549}
    filters = Filters(**{**KST_NOV_21.__dict__, **narrowed})
    t = one(reader.run("totals", filters))
    assert t["requests"] == len(request_ids)
    assert t["total_tokens"] == sum(tokens[r] for r in request_ids)


def test_by_node(reader: StoreReader) -> None:
    nodes = reader.run("by_node", KST_NOV_21)
    assert list(nodes["node"]) == ["blackwell", "l40-a", "unknown"]
    assert list(nodes["requests"]) == [1, 1, 1] and list(nodes["total_tokens"]) == [2400, 2549, 0]
    assert list(nodes["requests_share"]) == pytest.approx([1 / 3] * 3)
    assert list(nodes["tokens_share"]) == pytest.approx([2400 / 4949, 2549 / 4949, 0])
    assert list(nodes["failures"]) == [0, 0, 1]


def test_by_user(reader: StoreReader) -> None:
    users = reader.run("by_user", KST_NOV_21).set_index("user")
    assert list(users.index) == ["alice", "bob"]  # by spend
    assert (users.loc["alice", "requests"], users.loc["bob", "requests"]) == (1, 2)
    assert users.loc["bob", "failures"] == 1
    assert users.loc["alice", "spend_share"] == pytest.approx(0.020 / 0.02025662)
    assert users.loc["bob", "tokens_share"] == pytest.approx(2549 / 4949)
    assert users.loc["alice", "cache_hit_rate"] == pytest.approx(0.5)


def test_by_client_and_who_uses_which(reader: StoreReader) -> None:
    clients = reader.run("by_client", KST_NOV_21)
    assert list(clients["client"]) == ["Claude Code", "Python HTTP", "unknown"]
    assert list(clients["active_users"]) == [1, 1, 1]
    # what each tool cost: LiteLLM's spend of its requests, and its share of the range's
    assert list(clients["spend_usd"]) == pytest.approx([0.020, 0.00025662, 0.0])
    assert list(clients["spend_share"]) == pytest.approx([0.020 / 0.02025662, 0.00025662 / 0.02025662, 0.0])
    matrix = reader.run("user_client_matrix", KST_NOV_21)
    assert [
        tuple(r)
        for r in matrix[["user", "client", "requests", "total_tokens", "spend_usd"]].itertuples(index=False)
    ] == [
        ("alice", "Claude Code", 1, 2400, pytest.approx(0.020)),
        ("bob", "Python HTTP", 1, 2549, pytest.approx(0.00025662)),
        ("bob", "unknown", 1, 0, 0.0),
    ]


def test_by_model(reader: StoreReader) -> None:
    models = reader.run("by_model", KST_NOV_21)
    assert list(models["model"]) == ["gpt-oss-120b", "qwen3-coder-30b", "unknown-model"]
    assert list(models["spend_usd"]) == pytest.approx([0.020, 0.00025662, 0.0])


def test_the_overview_runs_its_queries_together(reader: StoreReader) -> None:
    results = overview(reader, KST_NOV_21)
    assert one(results["totals"])["requests"] == 3
    assert one(results["totals_previous"])["requests"] == 1
    assert len(results["by_bucket"]) == 24 and len(results["user_client_matrix"]) == 3


def test_a_student_scope_restricts_every_query(reader: StoreReader) -> None:
    alice_key = ROWS[0]["api_key"]
    filters = Filters(**{**KST_NOV_21.__dict__, "only_keys": (alice_key,)})
    for name in ("totals", "by_user", "by_node", "by_client", "by_model", "user_client_matrix", "by_bucket"):
        result = reader.run(name, filters)
        if "user" in result:
            assert set(result["user"]) <= {"alice"}, name
    assert one(reader.run("totals", filters))["requests"] == 1
    nothing = Filters(**{**KST_NOV_21.__dict__, "only_keys": ()})
    assert one(reader.run("totals", nothing))["requests"] == 0


# Queries that take parameters besides the filters, with example values for the meta-test.
EXAMPLE_PARAMS: dict[str, dict[str, Any]] = {
    "key_lookup": {"key_hash": "0" * 64},
    "student_keys": {"user_id": "alice"},
    "peers": {"own_keys": [], "named": False, "by": "requests"},
    "etl_health": {"now": dt.datetime(2026, 11, 22, tzinfo=dt.UTC)},
    "etl_runs": {"limit": 50},
    "load_table": {"stable_p95_ms": 3000.0},
    "statement": {"month": "2026-11"},
}


def test_every_parametrised_query_has_example_parameters() -> None:
    import re

    from queries.runner import NAME_PARAMS, load_sql

    needing = {
        name for name in query_names() if set(re.findall(r"\$([a-z_]+)", load_sql(name))) - NAME_PARAMS.keys()
    }
    assert needing == set(EXAMPLE_PARAMS)


@pytest.mark.parametrize("name", query_names())
def test_every_query_runs_with_defaults_on_an_empty_and_a_filled_store(
    name: str, reader: StoreReader, tmp_path: Path
) -> None:
    params = EXAMPLE_PARAMS.get(name, {})
    empty = StoreReader(tmp_path / "no-store-here").run(name, **params)
    filled = reader.run(name, **params)
    assert list(empty.columns) == list(filled.columns)


def test_an_empty_range_gives_zeros_not_errors(reader: StoreReader) -> None:
    far = Filters(
        start=dt.datetime(2020, 1, 1, tzinfo=UTC), end=dt.datetime(2020, 1, 2, tzinfo=UTC), tz=SEOUL
    )
    t = one(reader.run("totals", far))
    assert (t["requests"], t["total_tokens"], t["spend_usd"]) == (0, 0, 0)
    assert t["success_rate"] is None or math.isnan(t["success_rate"])
    assert reader.run("by_user", far).empty
    assert list(reader.run("by_bucket", far)["requests"]) == [0] * 24


def test_the_store_status_ignores_the_filters(reader: StoreReader) -> None:
    status = one(reader.run("store_status", KST_NOV_21))
    assert (status["requests"], status["users"], status["last_run_status"]) == (5, 3, "ok")


def test_a_new_etl_run_is_seen_without_restarting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new snapshot loads in the background; queries meanwhile answer from the old."""
    import time

    monkeypatch.setattr("queries.runner.RECHECK_S", 0.0)
    config = Config(store=tmp_path / "store", nodes=NODES)
    ingest_rows(config, ROWS[:2])
    reader = StoreReader(config.store)
    before = reader.version()
    assert one(reader.run("totals"))["requests"] == 2
    ingest_rows(config, ROWS[2:4])
    counts: list[int] = []
    deadline = time.monotonic() + 20
    while not counts or counts[-1] != 4:
        assert time.monotonic() < deadline, counts
        counts.append(int(one(reader.run("totals"))["requests"]))
    assert set(counts) <= {2, 4}
    assert reader.version() != before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"start": dt.datetime(2026, 1, 1), "end": dt.datetime(2026, 1, 2, tzinfo=UTC)}, "time-zone aware"),
        (
            {"start": dt.datetime(2026, 1, 2, tzinfo=UTC), "end": dt.datetime(2026, 1, 1, tzinfo=UTC)},
            "reversed",
        ),
        ({"tz": "Mars/Olympus"}, "unknown time zone"),
        ({"bucket": "week"}, "bucket must be"),
        ({"statuses": ("ok",)}, "status must be"),
    ],
)
def test_bad_filters_say_what_is_wrong(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidFilter, match=message):
        Filters(**kwargs)


def test_bucket_size_follows_the_range_and_can_be_overridden() -> None:
    now = dt.datetime(2026, 12, 1, tzinfo=UTC)
    assert Filters.last(dt.timedelta(hours=48), now=now).bucket_size == "hour"
    assert Filters.last(dt.timedelta(hours=49), now=now).bucket_size == "day"
    assert Filters.last(dt.timedelta(days=30), now=now, bucket="hour").bucket_size == "hour"


def test_an_unknown_query_names_the_known_ones(reader: StoreReader) -> None:
    with pytest.raises(UnknownQuery, match="by_user"):
        reader.run("nope")


def test_reads_stay_consistent_while_the_etl_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every read sees whole ETL runs' rows for a day (each run adds 20 requests to the
    same day file), never a half-written file, never an error."""
    import threading
    import time

    monkeypatch.setattr("queries.runner.RECHECK_S", 0.0)
    config = Config(store=tmp_path / "store")
    day = dt.datetime(2026, 11, 20, 3, 0)
    batches = [
        [spend_log(start=day + dt.timedelta(seconds=60 * b + i)) for i in range(20)] for b in range(12)
    ]
    ingest_rows(config, batches[0])
    reader = StoreReader(config.store)
    seen: list[int] = []
    errors: list[BaseException] = []
    done = threading.Event()

    def write() -> None:
        try:
            for batch in batches[1:]:
                ingest_rows(config, batch)
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    writer = threading.Thread(target=write)
    writer.start()
    while not done.is_set():
        seen.append(int(one(reader.run("totals"))["requests"]))
    writer.join()
    deadline = time.monotonic() + 20
    while seen[-1] != 240 and time.monotonic() < deadline:
        seen.append(int(one(reader.run("totals"))["requests"]))
    assert not errors
    assert all(n % 20 == 0 for n in seen) and seen == sorted(seen)
    assert seen[-1] == 240 and len(set(seen)) > 2  # the reads did overlap the writes


def test_sub_millisecond_times_land_in_the_right_bucket(tmp_path: Path) -> None:
    """The last instant of a Seoul day stays in that day, in totals and in buckets alike;
    a first token a fraction of a millisecond before the end is too short to time, not
    a division by zero."""
    last = dt.datetime(2026, 11, 21, 14, 59, 59, 999700)  # 23:59:59.9997 in Seoul
    row = spend_log(start=last, request_id="edge")
    row["completionStartTime"] = last + dt.timedelta(microseconds=100)
    row["endTime"] = last + dt.timedelta(microseconds=400)
    store = tmp_path / "store"
    ingest_rows(Config(store=store), [row])
    reader = StoreReader(store)
    assert one(reader.run("totals", KST_NOV_21))["requests"] == 1
    buckets = reader.run("by_bucket", KST_NOV_21)
    assert buckets["requests"].sum() == 1 and buckets.iloc[-1]["requests"] == 1  # the 23:00 hour
    with reader.cursor(KST_NOV_21) as cur:
        tps = cur.execute(
            "SELECT metric.output_tps_p50(r), metric.speed_too_short(r) FROM scoped r"
        ).fetchone()
    assert tps == (None, 1)


def test_the_hour_that_repeats_when_clocks_go_back_is_two_buckets(tmp_path: Path) -> None:
    """New York, 1 November 2026: 01:00-02:00 happens twice (EDT, then EST)."""
    rows = [
        spend_log(start=dt.datetime(2026, 11, 1, 5, 30), request_id="edt"),  # 01:30 EDT
        spend_log(start=dt.datetime(2026, 11, 1, 6, 30), request_id="est-1"),  # 01:30 EST
        spend_log(start=dt.datetime(2026, 11, 1, 6, 40), request_id="est-2"),
    ]
    store = tmp_path / "store"
    ingest_rows(Config(store=store), rows)
    day = Filters(
        start=dt.datetime(2026, 11, 1, 4, 0, tzinfo=UTC),
        end=dt.datetime(2026, 11, 2, 5, 0, tzinfo=UTC),
        tz="America/New_York",
        bucket="hour",
    )
    series = StoreReader(store).run("by_bucket", day)
    assert len(series) == 25
    one_am = series[series["bucket"] == pd.Timestamp("2026-11-01 01:00")]
    assert list(one_am["requests"]) == [1, 2]
    assert list(one_am["bucket_start"].dt.hour) == [5, 6]  # UTC
    daily = StoreReader(store).run("by_bucket", replace(day, bucket="day"))
    assert list(daily["requests"]) == [3]


def test_a_students_scope_reaches_the_status_and_the_filter_choices(reader: StoreReader) -> None:
    alice = replace(KST_NOV_21, only_keys=(ROWS[0]["api_key"],))
    status = one(reader.run("store_status", alice))
    assert (status["requests"], status["users"]) == (2, 1)
    choices = reader.run("dimensions", alice)
    assert set(choices[choices["dimension"] == "user"]["value"]) == {"alice"}
    assert choices[choices["value"] == "gpt-oss-120b"]["requests"].item() == 2  # her two, not the lab's


def test_open_ranges_beyond_the_data_are_empty_not_errors(reader: StoreReader) -> None:
    after = Filters(start=dt.datetime(2030, 1, 1, tzinfo=UTC))
    before = Filters(end=dt.datetime(2020, 1, 1, tzinfo=UTC))
    assert one(reader.run("totals", after))["requests"] == 0
    assert one(reader.run("totals", before))["requests"] == 0
    both = reader.compare("totals", Filters()).set_index("period")
    assert both.loc["current", "requests"] == 5


def test_only_named_queries_run(reader: StoreReader) -> None:
    for name in ("setup/views", "../queries/totals", "totals.sql"):
        with pytest.raises(UnknownQuery):
            reader.run(name)


def test_filters_refuse_a_string_where_a_list_belongs() -> None:
    with pytest.raises(InvalidFilter, match="tuple of strings"):
        Filters(users="alice")  # type: ignore[arg-type]
    assert Filters(users=["alice"]).users == ("alice",)  # type: ignore[arg-type]


def test_a_day_file_from_an_older_store_loads_with_its_missing_column_empty(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    store = known_store.build(tmp_path / "store")
    for path in snapshot.day_files(store):
        pq.write_table(pq.read_table(path).drop_columns(["error_class"]), path)
    totals = one(StoreReader(store).run("totals", KST_NOV_21))
    assert totals["requests"] == 3 and totals["failures"] == 1


def test_a_day_file_damaged_while_serving_is_left_out_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The next snapshot serves every other day and names the damaged file; no query fails."""
    import time

    monkeypatch.setattr("queries.runner.RECHECK_S", 0.0)
    store = known_store.build(tmp_path / "store")
    reader = StoreReader(store)
    assert one(reader.run("totals"))["requests"] == 5
    damaged = snapshot.day_files(store)[0]
    lost = pq.read_table(damaged).num_rows
    damaged.write_bytes(damaged.read_bytes()[:60])
    deadline = time.monotonic() + 20
    while not reader.damaged():
        assert time.monotonic() < deadline
        assert one(reader.run("totals"))["requests"] in (5, 5 - lost)  # old snapshot, or the new
        time.sleep(0.05)
    [(name, error)] = reader.damaged().items()
    assert store / name == damaged and "arquet" in error
    assert one(reader.run("totals"))["requests"] == 5 - lost
