"""The Nodes page's prefix caching, prompt-length bands and load table (issue 18),
computed by hand over a store of known requests, 10:00 to 12:00 UTC on Nov 20:

    blackwell (alice, streamed, cached tokens reported), prompt / cached tokens:
      a1 10:00:00.0  1 s  499 / 0      a2 10:00:00.5  1 s  500 / 100  (a1 still running)
      a3 10:10:00    2 s  1999 / 1000  a4 10:20:00    4 s  2000 / 900
    l40-a (bob, not streamed, no cached token ever), 1000 prompt tokens each:
      b1 10:30:00.0  1 s    b2 10:30:00.1  2 s    b3 10:30:00.2  6 s, failed    b4 10:40:00  0.5 s
    l40-b:8080 (bob): ten requests of 1200 prompt tokens from 11:30, one a minute, none cached
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from etl.run import ingest_rows
from queries import pages
from queries.filters import Filters, InvalidFilter
from queries.runner import StoreReader, days_read, load_sql
from queries.scope import ScopedReader
from queries.window import plan
from settings.config import Config
from tests.known_store import NODES, key_of, request

DAY = dt.datetime(2026, 11, 20)
RANGE = Filters(start=DAY.replace(hour=10, tzinfo=dt.UTC), end=DAY.replace(hour=12, tzinfo=dt.UTC), tz="UTC")


def at(hour: int, minute: int, second: float = 0.0) -> dt.datetime:
    return DAY.replace(hour=hour, minute=minute) + dt.timedelta(seconds=second)


def alice(rid: str, start: dt.datetime, ms: int, ttft: int, *, tokens: tuple[int, int]) -> Any:
    return request(
        "vllm_streamed_reasoning_cached",
        "alice",
        start,
        request_id=rid,
        usage=(*tokens, 100, 0),
        duration_ms=ms,
        ttft_ms=ttft,
    )


def bob(rid: str, start: dt.datetime, ms: int, **kw: Any) -> Any:
    prompt = kw.pop("prompt", 1000)
    return request(
        "llamacpp_non_streamed", "bob", start, request_id=rid, usage=(prompt, 0, 50, 0), duration_ms=ms, **kw
    )


ROWS = [
    alice("a1", at(10, 0), 1000, 200, tokens=(499, 0)),
    alice("a2", at(10, 0, 0.5), 1000, 300, tokens=(500, 100)),
    alice("a3", at(10, 10), 2000, 400, tokens=(1999, 1000)),
    alice("a4", at(10, 20), 4000, 500, tokens=(2000, 900)),
    bob("b1", at(10, 30), 1000),
    bob("b2", at(10, 30, 0.1), 2000),
    bob("b3", at(10, 30, 0.2), 6000, status="failure"),
    bob("b4", at(10, 40), 500),
    *(bob(f"c{i}", at(11, 30 + i), 1000, prompt=1200, api_base="http://l40-b:8080/v1") for i in range(10)),
]


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> StoreReader:
    store = tmp_path_factory.mktemp("insight") / "store"
    ingest_rows(Config(store=store, nodes=NODES), ROWS)
    return StoreReader(store)


def by(frame: Any, *keys: str) -> dict[Any, dict[str, Any]]:
    return {tuple(r[k] for k in keys): r for r in frame.to_dict("records")}


def missing(value: Any) -> bool:
    return bool(pd.isna(value))


def test_the_hit_rate_of_a_pair_that_reports_cached_tokens_and_of_one_that_does_not(
    reader: StoreReader,
) -> None:
    pairs = by(pages.nodes(reader, RANGE)["prefix_cache"], "node")
    blackwell, l40a, l40b = pairs[("blackwell",)], pairs[("l40-a",)], pairs[("l40-b:8080",)]
    assert (blackwell["requests"], blackwell["prompt_tokens"], blackwell["cached_tokens"]) == (4, 4998, 2000)
    assert blackwell["cache_hit_rate"] == pytest.approx(2000 / 4998)
    assert blackwell["cache_reported"] and not blackwell["repeated_prompts"]
    assert (l40a["requests"], l40a["prompt_tokens"], l40a["cached_tokens"]) == (4, 4000, 0)
    assert missing(l40a["cache_hit_rate"]) and not l40a["cache_reported"]  # not reported, not 0
    assert not l40a["uncached_repeats"]  # four requests: too few to call repeated
    # one key, ten requests of 1,200 prompt tokens, never a cached token: worth a look
    assert l40b["repeated_prompts"] and l40b["uncached_repeats"] and missing(l40b["cache_hit_rate"])


def test_the_hit_rate_over_time_leaves_a_gap_where_there_is_no_traffic(reader: StoreReader) -> None:
    rows = by(pages.nodes(reader, RANGE)["prefix_cache_by_bucket"], "node", "bucket")
    ten, eleven = at(10, 0), at(11, 0)
    assert len(rows) == 6  # every bucket for every pair
    assert rows[("blackwell", ten)]["cache_hit_rate"] == pytest.approx(2000 / 4998)
    quiet = rows[("blackwell", eleven)]
    assert (quiet["requests"], quiet["prompt_tokens"]) == (0, 0) and missing(quiet["cache_hit_rate"])
    busy = rows[("l40-b:8080", eleven)]  # traffic, but the pair reports no cached token
    assert busy["requests"] == 10 and missing(busy["cache_hit_rate"])


def test_prompt_bands_edges_and_their_percentiles(reader: StoreReader) -> None:
    bands = by(pages.nodes(reader, RANGE)["prompt_bands"], "band", "node")
    assert set(bands) == {
        ("0-500", "blackwell"),  # a1: 499
        ("500-2k", "blackwell"),  # a2: 500 (an edge belongs to the band above), a3: 1999
        ("2k-8k", "blackwell"),  # a4: 2000
        ("500-2k", "l40-a"),
        ("500-2k", "l40-b:8080"),
    }
    middle = bands[("500-2k", "blackwell")]
    assert (middle["band_lo"], middle["band_hi"], middle["requests"]) == (500, 2000, 2)
    assert (middle["ttft_p50_ms"], middle["ttft_p95_ms"]) == (pytest.approx(350), pytest.approx(395))
    assert (middle["latency_p50_ms"], middle["latency_p95_ms"]) == (pytest.approx(1500), pytest.approx(1950))
    # 100 tokens after the first: in 0.7 s (a2) and 1.6 s (a3)
    assert middle["output_tps_p50"] == pytest.approx((100 / 0.7 + 100 / 1.6) / 2)
    assert (
        missing(bands[("0-500", "blackwell")]["band_lo"]) and bands[("2k-8k", "blackwell")]["band_hi"] == 8000
    )
    l40a = bands[("500-2k", "l40-a")]
    assert l40a["requests"] == 4 and missing(l40a["ttft_p50_ms"])  # none streamed
    assert l40a["latency_p50_ms"] == pytest.approx(1500)  # 500, 1000, 2000, 6000


def test_band_edges_are_a_parameter_checked_before_use(reader: StoreReader) -> None:
    bands = pages.nodes(reader, RANGE, prompt_bands=(1000,))["prompt_bands"]
    assert sorted(set(bands["band"])) == ["0-1k", "1k+"]
    for wrong in ((), (2000, 500), (500, 500), (0,), (1.5,)):
        with pytest.raises(InvalidFilter, match="prompt band"):
            pages.nodes(reader, RANGE, prompt_bands=wrong)  # type: ignore[arg-type]
    with pytest.raises(InvalidFilter, match="p95"):
        pages.nodes(reader, RANGE, stable_p95_ms=0)


def test_the_load_table_per_level_in_flight(reader: StoreReader) -> None:
    rows = by(pages.nodes(reader, RANGE)["load_table"], "node", "model", "in_flight")
    l40a = {level: r for (node, model, level), r in rows.items() if node == "l40-a" and missing(model)}
    assert sorted(l40a) == [1, 2, 3]
    one, two, three = l40a[1], l40a[2], l40a[3]
    assert (one["requests"], one["failures"], one["failure_rate"]) == (2, 0, 0.0)  # b1, b4
    assert one["latency_avg_ms"] == 750 and one["latency_p50_ms"] == 750
    assert one["latency_p95_ms"] == pytest.approx(975)
    assert (two["requests"], two["latency_p95_ms"]) == (1, 2000)  # b2, with b1
    assert (three["requests"], three["failures"], three["failure_rate"]) == (1, 1, 1.0)  # b3
    assert three["latency_p95_ms"] == 6000
    # at 1: 0.1 s (b1), 4.1 s (b3 alone), 0.5 s (b4); at 2: 0.1 s and 1.1 s; at 3: 0.8 s
    assert [l40a[n]["seconds_at_level"] for n in (1, 2, 3)] == pytest.approx([4.7, 1.2, 0.8])
    assert [l40a[n]["requests_per_s"] for n in (1, 2, 3)] == pytest.approx([2 / 4.7, 1 / 1.2, 1 / 0.8])
    # bob's requests were not streamed: held to the target by their latency p95, which
    # stays within 3 s up to 2 in flight, not at 3
    assert {l40a[n]["judged_on"] for n in (1, 2, 3)} == {"latency_p95_ms"}
    assert [l40a[n]["judged_p95_ms"] for n in (1, 2, 3)] == pytest.approx([975, 2000, 6000])
    assert [l40a[n]["within_target"] for n in (1, 2, 3)] == [True, True, False]
    assert [(l40a[n]["stable_level"], l40a[n]["stable"]) for n in (1, 2, 3)] == [
        (2, True),
        (2, True),
        (2, False),
    ]
    by_model = rows[("l40-a", "qwen3-coder-30b", 3)]
    assert (by_model["requests"], by_model["seconds_at_level"]) == (1, pytest.approx(0.8))
    blackwell = [r for (node, model, _), r in rows.items() if node == "blackwell" and missing(model)]
    assert [r["in_flight"] for r in blackwell] == [1, 2]
    # what a streaming client waits for: a1, a3, a4 (200, 400, 500 ms) at 1, a2 (300) at 2;
    # bob's requests were not streamed, so their levels have none
    assert [r["ttft_p95_ms"] for r in blackwell] == pytest.approx([490, 300])
    assert all(missing(l40a[n]["ttft_p95_ms"]) for n in (1, 2, 3))
    # alice's were all streamed: held to the target by that, not by their latency p95 at
    # 1 in flight (1 s, 2 s, 4 s: 3.8 s, over 3 s); both levels are within it
    assert [r["latency_p95_ms"] for r in blackwell] == pytest.approx([3800, 1000])
    assert [(r["streamed_requests"], r["judged_on"]) for r in blackwell] == [
        (3, "ttft_p95_ms"),
        (1, "ttft_p95_ms"),
    ]
    assert [r["judged_p95_ms"] for r in blackwell] == pytest.approx([490, 300])
    assert all(r["within_target"] and r["stable_level"] == 2 and r["stable"] for r in blackwell)
    strict = pages.nodes(reader, RANGE, stable_p95_ms=400)["load_table"]  # 490 ms over, 300 ms within
    blackwell_strict = strict[strict["node"].eq("blackwell") & strict["model"].isna()]
    assert blackwell_strict["within_target"].tolist() == [False, True]
    assert blackwell_strict["stable_level"].isna().all() and not blackwell_strict["stable"].any()


STREAM_RANGE = replace(
    RANGE, start=DAY.replace(hour=12, tzinfo=dt.UTC), end=DAY.replace(hour=13, tzinfo=dt.UTC)
)
# Streamed answers of 20 s each on the Blackwell, in bursts: the k-th of a burst starts
# with k in flight. Their latency is over 3 s at every level; their first token is not,
# until the third in flight waits 4 s for it.
LONG_ANSWERS = [
    alice("s1", at(12, 0), 20_000, 400, tokens=(100, 0)),  # level 1
    alice("s2", at(12, 10), 20_000, 500, tokens=(100, 0)),  # level 1
    alice("s3", at(12, 10, 1), 20_000, 900, tokens=(100, 0)),  # level 2
    alice("s4", at(12, 20), 20_000, 600, tokens=(100, 0)),  # level 1
    alice("s5", at(12, 20, 1), 20_000, 1200, tokens=(100, 0)),  # level 2
    alice("s6", at(12, 20, 2), 20_000, 4000, tokens=(100, 0)),  # level 3
]


def test_streamed_requests_are_held_to_the_target_by_their_time_to_first_token(tmp_path: Path) -> None:
    """Every answer takes 20 s, so whole-request latency is over any target of a few
    seconds at every level and says nothing about load; the stable concurrency is where
    the time to first token's p95 crosses 3 s: 2 in flight."""
    store = tmp_path / "store"
    ingest_rows(Config(store=store, nodes=NODES), LONG_ANSWERS)
    table = pages.nodes(StoreReader(store), STREAM_RANGE)["load_table"]
    rows = table[table["model"].isna()].set_index("in_flight")
    assert rows["requests"].tolist() == [3, 2, 1]
    assert rows["latency_p95_ms"].tolist() == pytest.approx([20_000] * 3)
    # at 1: 400, 500, 600 ms; at 2: 900, 1200 ms; at 3: 4000 ms (p95 interpolated)
    expected = [500 + 0.9 * 100, 900 + 0.95 * 300, 4000]
    assert rows["ttft_p95_ms"].tolist() == pytest.approx(expected)
    assert set(rows["stable_level"]) == {2} and rows["stable"].tolist() == [True, True, False]
    assert rows["streamed_requests"].tolist() == [3, 2, 1] and set(rows["judged_on"]) == {"ttft_p95_ms"}
    assert rows["judged_p95_ms"].tolist() == pytest.approx(expected)
    assert rows["within_target"].tolist() == [True, True, False]
    per_model = table[table["model"].notna()]  # one model: the same levels
    assert per_model["stable_level"].tolist() == [2, 2, 2]


def test_a_student_sees_only_their_own_requests(reader: StoreReader) -> None:
    own = pages.nodes(ScopedReader(reader, (key_of("alice"),)), RANGE)
    for key in pages.NODES_INSIGHT:
        assert set(own[key]["node"]) == {"blackwell"}, key
    assert own["prefix_cache"]["requests"].tolist() == [4]
    assert own["load_table"]["requests"].sum() == 2 * 4  # per node, and per node and model
    nobody = pages.nodes(ScopedReader(reader, ()), RANGE)
    assert all(nobody[key].empty for key in ("prefix_cache", "prompt_bands", "load_table"))


def test_whole_days_come_from_the_days_partials_and_equal_the_requests(tmp_path: Path) -> None:
    """Over whole days and no filter, the load table, the hit rate by bucket, the prompt
    bands and the router's record read the days' cached partials (queries/serving.py); the
    same figures from the requests."""
    store = tmp_path / "store"
    ingest_rows(Config(store=store, nodes=NODES), ROWS)
    reader = StoreReader(store, share_results=False)
    days = Filters(
        start=dt.datetime(2026, 11, 19, tzinfo=dt.UTC), end=dt.datetime(2026, 11, 22, tzinfo=dt.UTC)
    )
    days = replace(days, tz="UTC")
    assert plan(days, "UTC")["nodes"]
    for name in ("load_table", "prefix_cache_by_bucket", "prompt_bands", "routing"):
        assert days_read(load_sql(name), plan(days, "UTC")) == "edges", name
    raw = replace(days, nodes=("blackwell", "l40-a", "l40-b:8080"))
    got, exact = pages.nodes(reader, days), pages.nodes(reader, raw)
    for name in pages.NODES_INSIGHT:
        assert list(got[name].columns) == list(exact[name].columns) and len(got[name]) == len(exact[name]), (
            name
        )
    a, b = got["prefix_cache_by_bucket"], exact["prefix_cache_by_bucket"]
    assert a.drop(columns="cache_hit_rate").equals(b.drop(columns="cache_hit_rate"))
    assert a["cache_hit_rate"].tolist() == pytest.approx(b["cache_hit_rate"].tolist(), nan_ok=True)
    a, b = got["load_table"], exact["load_table"]
    for column in ("requests", "failures", "streamed_requests", "judged_on", "within_target", "stable_level"):
        assert a[column].tolist() == b[column].tolist(), column
    for column in ("latency_avg_ms", "seconds_at_level", "requests_per_s"):
        assert a[column].tolist() == pytest.approx(b[column].tolist()), column
    for column in ("latency_p50_ms", "latency_p95_ms"):  # from bins, within HIST_ACCURACY
        assert a[column].tolist() == pytest.approx(b[column].tolist(), rel=0.01), column
    assert a.loc[a["node"].eq("l40-a") & a["model"].isna(), "requests"].tolist() == [2, 1, 1]
    a, b = got["prompt_bands"], exact["prompt_bands"]
    for column in ("band", "band_lo", "band_hi", "node", "model", "requests"):
        assert a[column].tolist() == b[column].tolist(), column
    for column in ("ttft_p50_ms", "ttft_p95_ms", "latency_p50_ms", "latency_p95_ms", "output_tps_p50"):
        assert a[column].tolist() == pytest.approx(b[column].tolist(), rel=0.01, nan_ok=True), column
    assert a.loc[a["node"].eq("blackwell"), "band"].tolist() == ["0-500", "500-2k", "2k-8k"]
    a, b = got["routing"], exact["routing"]
    counts = ("node", "model", "requests", "failures", "routing_known", "fallback_requests", "retries")
    for column in (*counts, "retried_requests", "fell_back_from"):
        assert a[column].tolist() == b[column].tolist(), column
    for column in ("overhead_p50_ms", "overhead_p95_ms"):
        assert a[column].tolist() == pytest.approx(b[column].tolist(), rel=0.01, nan_ok=True), column
    assert a["routing_known"].sum() > 0 and a["overhead_p50_ms"].notna().any()  # the rows say something
    # other edges, other partials (their cache key holds the edges)
    other = pages.nodes(reader, days, prompt_bands=(1000,))["prompt_bands"]
    assert other.loc[other["node"].eq("blackwell"), "band"].tolist() == ["0-1k", "1k+"]
    assert other.loc[other["node"].eq("blackwell"), "requests"].tolist() == [2, 2]
