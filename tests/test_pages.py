"""The administrator's other pages under AppTest: Nodes and Budgets."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import figures
from dashboard.auth import Identity
from etl.run import ingest_rows
from settings.config import Config
from tests import known_store, plotly_json, test_node_queries, test_serving_insight

APP = str(Path(__file__).resolve().parent.parent / "page.py")


ADMIN = Identity(role="admin", name="admin")


def open_page(store: Path, monkeypatch: pytest.MonkeyPatch, page: str, **params: str) -> AppTest:
    """`page` (its name, or its URL path in any language) of the app as an administrator."""
    return open_page_as(ADMIN, store, monkeypatch, page, **params)


def open_page_as(
    identity: Identity, store: Path, monkeypatch: pytest.MonkeyPatch, page: str, **params: str
) -> AppTest:
    """`page` (its name, or its URL path in any language) of the app as `identity`.
    AppTest switches only to pages defined by files, and ours are functions: the page is
    chosen by its hash, as Streamlit does."""
    monkeypatch.setenv("USAGE_STORE", str(store))
    monkeypatch.setenv("USAGE_TIMEZONE", "UTC")
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["identity"] = identity
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at._page_hash = next(
        h for h, p in at._registered_pages.items() if page in (p["page_name"], p["url_pathname"])
    )
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def node_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("nodes-page") / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), test_node_queries.ROWS)
    return store


def test_the_nodes_page_shows_every_panel(node_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(
        node_store, monkeypatch, "Nodes", range="custom", **{"from": "2026-11-20", "to": "2026-11-20"}
    )
    assert [h.value for h in at.main.header] == ["Nodes"]  # the page says which it is
    titles = [m.value for m in at.markdown]
    for title in (
        "Per GPU node",
        "Per model",
        "Requests in flight",
        "Latency against requests in flight",
        "Output speed over time",
        "Time to first token over time",
        "Failures by error class",
        "Load table",
        "Latency by prompt length",
        "Prefix caching per node and model",
        "Routing: how the proxy spread the load",
    ):
        assert f"**{title}**" in titles
    nodes = at.dataframe[0].value
    assert list(nodes["node"]) == ["l40-a", "blackwell"]
    assert list(nodes["speed_too_short"]) == [1, 1]
    charts = {c.proto.id.rsplit("-", 1)[-1]: plotly_json.figure(c.proto.spec) for c in at.get("plotly_chart")}
    assert set(charts) == {
        "concurrency",
        "saturation",
        "speed",
        "ttft",
        "failures",
        "prompt_bands",
        "prefix_cache",
        "node_shares",
    }
    peaks = {t["name"]: max(t["y"]) for t in charts["concurrency"]["data"]}
    assert peaks == {"l40-a": 2, "blackwell": 1}
    # every time chart covers the page's whole range, whenever its first value falls
    axes = {key: charts[key]["layout"]["xaxis"] for key in ("concurrency", "speed", "ttft", "failures")}
    drawn = [key for key, axis in axes.items() if axis.get("visible", True)]  # not the empty chart
    assert {"concurrency", "speed", "ttft"} <= set(drawn)
    ranges = {tuple(charts[key]["layout"]["xaxis"]["range"]) for key in drawn}
    assert ranges == {("2026-11-20 00:00:00", "2026-11-21 00:00:00")}


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    """The page's table that has `column` (its data under the Styler's display text)."""
    shown = [getattr(d.value, "data", d.value) for d in at.dataframe]
    return next(frame for frame in shown if column in frame)


def test_the_nodes_page_shows_serving_insight(node_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prefix caching, prompt bands and the load table as a person reads them: a model
    that never reports cached tokens is "not reported", not 0 %; the stable concurrency
    is named, per node as chosen."""
    at = open_page(
        node_store, monkeypatch, "Nodes", range="custom", **{"from": "2026-11-20", "to": "2026-11-20"}
    )
    cache = frame_with(at, "cache_hit_rate")
    assert cache["cache_hit_rate"].isna().all()
    assert set(cache["note"]) == {"none reported"}
    bands = frame_with(at, "band")
    assert list(bands["band"]) == ["0-500", "500-2k", "2k-8k"]
    assert list(bands["pair"]) == [
        "blackwell · gpt-oss-120b",
        "l40-a · qwen3-coder-30b",
        "l40-a · qwen3-coder-30b",
    ]
    assert list(bands["requests"]) == [1, 2, 3]
    # the Blackwell's one request (r6) was streamed: held to 3 s by its first token, 850 ms
    markdown = [m.value for m in at.markdown]
    assert "Stable up to **1** requests in flight (TTFT p95 within 3.0 s)." in markdown
    at.selectbox(key="load_node").select("l40-a").run()
    # l40-a at 1 in flight: r4 and r5, not streamed, 15 s and 20 s: latency p95 19.75 s;
    # at 2: r1, r2, r3, streamed, first tokens after 1 s, 0.5 s, 2 s: TTFT p95 1.9 s
    over = next(m.value for m in at.markdown if m.value.startswith("Over 3.0 s from the lowest level on: "))
    found = re.fullmatch(
        r"Over 3\.0 s from the lowest level on: latency p95 is ([\d.]+) s at 1 in flight\.", over
    )
    assert found and float(found[1]) == pytest.approx(19.75, abs=0.2)  # percentile bins: within 1 %
    load = frame_with(at, "in_flight")
    assert list(load["in_flight"]) == [1, 2] and list(load["requests"]) == [2, 3]
    assert list(load["within_target"]) == ["over (latency)", "yes (TTFT)"]
    assert list(load["latency_p95_ms"]) == [pytest.approx(19750, rel=0.01), pytest.approx(29000, rel=0.01)]
    assert list(load["ttft_p95_ms"])[1] == pytest.approx(1900, rel=0.01)
    routed = frame_with(at, "fallback_requests").set_index("node")
    # LiteLLM's own rows: every request routed as asked, no retry
    assert routed["requests"].to_dict() == {"l40-a": 5, "blackwell": 1}
    assert routed["routing_known"].to_dict() == routed["requests"].to_dict()
    assert routed["fallback_requests"].sum() == 0 and routed["retries"].sum() == 0


def test_a_student_sees_how_the_nodes_served_their_own_requests_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """alice's two requests on the Blackwell (1,200 of 3,000 prompt tokens cached); bob's
    on the L40 and his failure are not hers, and none of it reaches her page."""
    store = known_store.build(tmp_path / "store")
    key = known_store.key_of("alice")
    alice = Identity(role="student", name="alice", keys=(key,), key=key)
    at = open_page_as(
        alice,
        store,
        monkeypatch,
        "Nodes",
        range="custom",
        **{"from": "2026-11-19", "to": "2026-11-21"},
    )
    # a1 and b1, streamed, one after the other: first tokens after 500 and 800 ms
    assert "Stable up to **1** requests in flight (TTFT p95 within 3.0 s)." in [m.value for m in at.markdown]
    assert at.info[0].value.startswith("Your own requests only")  # not the nodes' whole load
    assert [h.value for h in at.main.header] == ["Nodes"]
    nodes = frame_with(at, "requests_share")
    assert list(nodes["node"]) == ["blackwell"] and list(nodes["requests"]) == [2]
    cache = frame_with(at, "cache_hit_rate")
    assert list(cache["requests"]) == [2] and cache["cache_hit_rate"].tolist() == [pytest.approx(0.4)]
    load = frame_with(at, "in_flight")  # one after the other: both at level 1
    assert list(load["in_flight"]) == [1] and list(load["requests"]) == [2]
    assert at.selectbox(key="load_node").options == ["blackwell"]
    assert frame_with(at, "band")["requests"].sum() == 2


def test_the_nodes_page_marks_a_highlighted_user(node_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(
        node_store,
        monkeypatch,
        "Nodes",
        range="custom",
        highlight="tomas.weber",
        **{"from": "2026-11-20", "to": "2026-11-20"},
    )
    nodes = at.dataframe[0].value
    assert list(nodes["mine"]) == [5, 1]  # the whole day, r4 included: all tomas.weber's
    charts = {c.proto.id.rsplit("-", 1)[-1]: json.dumps(c.proto.spec) for c in at.get("plotly_chart")}
    assert figures.ACCENT in charts["speed"] and figures.ACCENT in charts["saturation"]
    # the page clears it as the overview does
    at.button(key="clear_highlight").click().run()
    assert "highlight" not in at.query_params and "mine" not in at.dataframe[0].value


def test_the_serving_insight_shows_a_highlighted_users_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/test_serving_insight.py's day: alice's four requests on the Blackwell (40 % of
    her prompt tokens cached), bob's on the L40s. Highlighted, alice's requests stand
    beside each row of the load table and the routing table, her own hit rate beside each
    pair's, her own times per prompt band as dots on its chart; where she sent nothing,
    0 and no rate."""
    store = tmp_path / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), test_serving_insight.ROWS)
    day = {"from": "2026-11-20", "to": "2026-11-20"}
    at = open_page(store, monkeypatch, "Nodes", range="custom", highlight="alice", **day)
    load = frame_with(at, "in_flight")  # the Blackwell, the first node: all hers
    assert list(load["requests"]) == [3, 1] and list(load["mine_requests"]) == [3, 1]
    charts = {c.proto.id.rsplit("-", 1)[-1]: plotly_json.figure(c.proto.spec) for c in at.get("plotly_chart")}
    hers = [d for d in charts["prompt_bands"]["data"] if d["name"] == "alice"]  # her median TTFT per band
    assert len(hers) == 1 and hers[0]["marker"]["color"] == figures.ACCENT
    assert hers[0]["x"] == ["0-500", "500-2k", "2k-8k"] and hers[0]["y"] == pytest.approx(
        [200, 350, 500], rel=0.01
    )
    cache = frame_with(at, "cache_hit_rate").set_index("pair")
    assert cache.loc["blackwell · gpt-oss-120b", "mine_cache_hit_rate"] == pytest.approx(2000 / 4998)
    assert cache["mine_cache_hit_rate"].isna().to_dict() == {  # none of hers: no rate
        "l40-b:8080 · qwen3-coder-30b": True,
        "blackwell · gpt-oss-120b": False,
        "l40-a · qwen3-coder-30b": True,
    }
    routed = frame_with(at, "fallback_requests").set_index("node")
    assert routed["mine_requests"].to_dict() == {"l40-b:8080": 0, "l40-a": 0, "blackwell": 4}
    at.selectbox(key="load_node").select("l40-a").run()
    assert set(frame_with(at, "in_flight")["mine_requests"]) == {0}  # bob's node
    at.button(key="clear_highlight").click().run()
    assert "mine_requests" not in frame_with(at, "in_flight")


def test_the_budgets_page_lists_the_keys_closest_to_their_budget_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = known_store.build(tmp_path / "store")
    at = open_page(store, monkeypatch, "Budgets")
    assert [h.value for h in at.main.header] == ["Budgets"]
    shown = at.dataframe[0].value
    table = getattr(shown, "data", shown)  # a Styler: the level is coloured on the students' scale too
    assert list(table["level"])[:2] == ["at risk", "within budget"]
    assert list(table["key_alias"])[:2] == ["bob-laptop", "alice-laptop"]  # 92 %, then 32.5 %
    assert table.iloc[0]["budget_used"] == pytest.approx(92.0)  # the bar's 0-100 scale: "92.0 %"
    summary = "**5** keys: **0** over budget, **1** at risk (80 % used, or running out before their reset)."
    assert summary in [m.value for m in at.markdown]
