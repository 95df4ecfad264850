"""How the proxy spread the load (issue 18, part 4): each node's share of the requests
over time, and what LiteLLM's router did per node and model, on the store of
tests/known_store.py, whose every row is known."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import pandas as pd
import pytest

from etl.run import ingest_rows
from queries.filters import Filters
from queries.runner import StoreReader
from settings.config import Config
from tests import known_store
from tests.known_store import KST_NOV_21


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> StoreReader:
    return StoreReader(known_store.build(tmp_path_factory.mktemp("routing") / "store"))


def test_the_router_per_node_and_model(reader: StoreReader) -> None:
    """d1 was asked of gpt-oss-120b and served by its fallback on the L40 after two
    retries; b1 was served as asked; c1 failed before the router: unknown, not 0."""
    rows = reader.run("routing", KST_NOV_21)
    assert rows["model"].isna().sum() == 3  # a row per node first, then per node and model
    assert list(rows["model"].iloc[3:]) == ["gpt-oss-120b", "qwen3-coder-30b", "unknown-model"]
    per_node = rows[rows["model"].isna()].set_index("node")
    per_model = rows[rows["model"].notna()].set_index("node")
    # one model per node here: the node's row is its model's
    same = [c for c in per_node if c != "model"]
    pd.testing.assert_frame_equal(per_node[same], per_model.loc[per_node.index, same])
    l40, blackwell, unknown = per_node.loc["l40-a"], per_node.loc["blackwell"], per_node.loc["unknown"]
    assert (l40["requests"], l40["routing_known"], l40["fallback_requests"]) == (1, 1, 1)
    assert (l40["retried_requests"], l40["retries"]) == (1, 2)
    assert l40["fell_back_from"] == "gpt-oss-120b"
    assert l40["overhead_p50_ms"] == pytest.approx(12.5) and l40["overhead_p95_ms"] == pytest.approx(12.5)
    assert (blackwell["routing_known"], blackwell["fallback_requests"], blackwell["retries"]) == (1, 0, 0)
    assert pd.isna(blackwell["fell_back_from"])
    assert pd.isna(blackwell["overhead_p50_ms"])  # streamed: LiteLLM times no overhead
    assert (unknown["requests"], unknown["failures"], unknown["routing_known"]) == (1, 1, 0)


def test_a_students_routing_is_their_own(reader: StoreReader) -> None:
    mine = Filters(
        start=KST_NOV_21.start,
        end=KST_NOV_21.end,
        tz=KST_NOV_21.tz,
        only_keys=(known_store.key_of("alice"),),
    )
    rows = reader.run("routing", mine)
    assert list(rows["node"]) == ["blackwell", "blackwell"] and list(rows["requests"]) == [1, 1]


def test_each_nodes_share_per_bucket(reader: StoreReader) -> None:
    """Seoul's Nov 21 by the hour: b1 at 00:30 on the Blackwell, d1 at 10:00 on the L40;
    c1 failed at 08:30 before reaching a node, so it is no node's share; every other hour
    is a gap for every node."""
    rows = reader.run("node_share_by_bucket", KST_NOV_21)
    assert set(rows["node"]) == {"blackwell", "l40-a"}
    assert len(rows) == 24 * 2  # every hour for every node
    hours = {(row["bucket"].hour, row["node"]): row for _, row in rows.iterrows()}
    assert hours[(0, "blackwell")]["requests"] == 1 and hours[(0, "blackwell")]["requests_share"] == 1.0
    assert not rows["troubled"].any()  # no failure on a node
    assert hours[(0, "l40-a")]["requests"] == 0 and hours[(0, "l40-a")]["requests_share"] == 0.0
    assert math.isnan(hours[(8, "l40-a")]["requests_share"])  # c1's hour: no node had a request
    assert hours[(10, "l40-a")]["requests"] == 1 and hours[(10, "l40-a")]["failures"] == 0
    assert math.isnan(hours[(5, "blackwell")]["requests_share"])  # no request at all: a gap
    assert rows["requests"].sum() == 2 and rows["failures"].sum() == 0


def test_the_load_table_leaves_out_requests_that_reached_no_node(reader: StoreReader) -> None:
    """c1 failed before the router sent it anywhere: no node served it under any load
    (it read as 'unknown' at 1 in flight, 100 % failed, tens of requests per second)."""
    rows = reader.run("load_table", KST_NOV_21, stable_p95_ms=3000.0)
    assert set(rows["node"]) == {"blackwell", "l40-a"}
    assert rows.loc[rows["model"].isna(), "requests"].sum() == 2  # b1 and d1
    assert reader.run("routing", KST_NOV_21).set_index("node").loc["unknown"].iloc[0]["requests"] == 1


def test_whole_days_come_from_the_partials_with_the_same_counts(reader: StoreReader) -> None:
    """Daily buckets over whole days (what the partials answer): e1 on Nov 19, a1 on
    Nov 20 and the three of Nov 21, Seoul time."""
    days = Filters(
        start=pd.Timestamp("2026-11-18T15:00Z").to_pydatetime(),
        end=pd.Timestamp("2026-11-21T15:00Z").to_pydatetime(),
        tz=KST_NOV_21.tz,
        bucket="day",
    )
    rows = reader.run("node_share_by_bucket", days)
    per_day = rows.groupby(rows["bucket"].dt.day)["requests"].sum().to_dict()
    assert per_day == {19: 1, 20: 1, 21: 2}  # c1 reached no node
    nov_21 = rows[rows["bucket"].dt.day == 21].set_index("node")
    assert nov_21.loc["blackwell", "requests_share"] == pytest.approx(1 / 2)


def test_a_node_going_down_is_marked_where_its_failures_stand_out(tmp_path: Path) -> None:
    """Six of eight requests failing on one node in an hour mark it; one failure among
    many, or a single failure in a quiet hour, does not."""
    start = dt.datetime(2026, 11, 20, 1, 0)
    rows = [
        known_store.request(
            "failure_after_routing",
            "alice",
            start + dt.timedelta(minutes=i),
            request_id=f"f{i}",
            duration_ms=50,
        )
        for i in range(6)
    ]
    rows += [
        known_store.request(
            "llamacpp_non_streamed",
            "bob",
            start + dt.timedelta(minutes=i),
            request_id=f"s{i}",
            duration_ms=900,
        )
        for i in range(2)
    ]
    store = tmp_path / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), rows)
    hour = Filters(
        start=dt.datetime(2026, 11, 20, 0, 0, tzinfo=dt.UTC),
        end=dt.datetime(2026, 11, 20, 3, 0, tzinfo=dt.UTC),
        tz="UTC",
    )
    shares = StoreReader(store).run("node_share_by_bucket", hour)
    marked = shares[shares["troubled"]]
    assert [
        (b.hour, n, f) for b, n, f in zip(marked["bucket"], marked["node"], marked["failures"], strict=True)
    ] == [(1, failed_node(store), 6)]


def failed_node(store: Path) -> str:
    """The node LiteLLM's failure row of the samples was routed to."""
    frame = pd.read_parquet(store / "requests")
    return str(frame.loc[frame["status"] == "failure", "node"].iloc[0])
