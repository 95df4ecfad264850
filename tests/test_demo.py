"""The demo: a plausible simulated lab, its noise dropped by the ETL's own code, a store
kept apart from real ones, and a dashboard that says "demo" wherever it shows one."""

from __future__ import annotations

import collections
import datetime as dt
import statistics
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import demo_mode
from etl import demo, simulate
from etl.run import ingest_rows, run_etl
from settings.config import Config, load_config
from settings.errors import ConfigError
from tests import known_store, storeview

APP = str(Path(__file__).resolve().parent.parent / "page.py")
NOW = dt.datetime(2026, 12, 3, 3, 0, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def week() -> list[dict[str, Any]]:
    return list(simulate.simulate(days=7, end=NOW))


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("demo") / "demo-store"
    demo.build(store, now=NOW)  # the full 30 days: budgets are set for them
    return store


def is_noise(row: dict[str, Any]) -> str | None:
    if row["api_key"] == simulate.HEALTH_CHECK:
        return "health_check"
    if row["api_key"] == simulate.MASTER_KEY_HASH:
        return "master_key"
    return None


def test_the_simulated_lab_is_plausible(week: list[dict[str, Any]]) -> None:
    requests = [r for r in week if not is_noise(r)]
    noise = collections.Counter(is_noise(r) for r in week if is_noise(r))
    assert 7 * 400 < len(requests) < 7 * 1500
    local = [r["startTime"].replace(tzinfo=dt.UTC).astimezone(simulate.LAB_TZ) for r in requests]
    whole = [t for t in local if local[0].date() < t.date() < local[-1].date()]  # whole days only
    weekday = collections.Counter(t.date() for t in whole if t.weekday() < 5)
    weekend = collections.Counter(t.date() for t in whole if t.weekday() >= 5)
    assert min(weekday.values()) > max(weekend.values())  # a lab's week
    hours = collections.Counter(t.hour for t in local)
    assert hours[15] > 5 * hours[5]  # afternoons in Seoul, not 5 am
    assert noise["health_check"] >= 3 * 4 * 24 * 7 * 0.95  # three nodes every 15 minutes
    assert noise["master_key"] > 0
    users = collections.Counter(r["user"] for r in requests)
    assert len(users) == 13 and users.most_common(1)[0][0] == "minji.park"
    assert {r["api_base"] for r in requests if r["api_base"]} == {d.api_base for d in simulate.DEPLOYMENTS}
    clients = {r["metadata"]["user_agent"].split("/")[0] for r in requests if r["metadata"]["user_agent"]}
    assert len(clients) >= 6
    failures = sum(r["status"] == "failure" for r in requests) / len(requests)
    assert 0.01 < failures < 0.06
    ok = [r for r in requests if r["status"] == "success"]
    streamed = [r for r in ok if r["completionStartTime"] < r["endTime"]]
    assert 0.4 < len(streamed) / len(ok) < 0.9
    details = [(r, r["metadata"]["usage_object"]["completion_tokens_details"] or {}) for r in ok]
    reasoning = [r for r, d in details if d.get("reasoning_tokens")]
    assert reasoning and all("blackwell" in r["api_base"] for r in reasoning)  # only vLLM's model reasons
    cached = [r["metadata"]["usage_object"]["prompt_tokens_details"]["cached_tokens"] for r in ok]
    assert 0.3 < sum(c > 0 for c in cached) / len(ok) < 0.9
    # the Blackwell serves faster than the L40s: median output tokens/s of streamed answers
    speed = collections.defaultdict(list)
    for r in streamed:
        seconds = (r["endTime"] - r["completionStartTime"]).total_seconds()
        speed[r["api_base"]].append(r["completion_tokens"] / seconds)
    medians = {base: statistics.median(v) for base, v in speed.items()}
    assert medians[simulate.GPT_OSS.api_base] > 2 * medians[simulate.L40_A.api_base]


def served(store: Path) -> list[dict[str, Any]]:
    columns = ["start_time", "node", "model_group", "status", "prompt_tokens", "cached_tokens", "duration_ms"]
    rows: list[dict[str, Any]] = storeview.requests(store).select(columns).to_pylist()
    return rows


def test_one_model_on_the_main_node_never_hits_the_prefix_cache_the_other_nearly_always(
    demo_store: Path,
) -> None:
    """Issue 18's prefix-cache hit rate per model and node: the hybrid (Mamba) model gets
    the same long agent prompts as gpt-oss on the same node, and reports no cached token."""
    ok = [r for r in served(demo_store) if r["status"] == "success"]
    groups = {r["model_group"] for r in ok}
    no_cache, cached = simulate.NEMOTRON.model_group, simulate.GPT_OSS.model_group
    assert {no_cache, cached} <= groups and no_cache != cached
    hybrid = [r for r in ok if r["model_group"] == no_cache]
    assert (
        {r["node"] for r in hybrid}
        == {r["node"] for r in ok if r["model_group"] == cached}
        == {"blackwell-vllm"}
    )
    assert sum(r["prompt_tokens"] > 2000 for r in hybrid) >= 500 and all(
        r["cached_tokens"] == 0 for r in hybrid
    )
    gpt = [r for r in ok if r["model_group"] == cached]
    assert 0.88 < sum(r["cached_tokens"] for r in gpt) / sum(r["prompt_tokens"] for r in gpt) < 0.97


BANDS = (0, 500, 2000, 8000, 32000)  # issue 18's prompt-length bands, by their lower bound


def test_one_backup_slows_sharply_with_long_prompts_the_main_node_gently(demo_store: Path) -> None:
    durations: dict[tuple[str, int], list[int]] = collections.defaultdict(list)
    for r in served(demo_store):
        if r["status"] == "success":
            band = max(b for b in BANDS if r["prompt_tokens"] >= b)
            durations[r["node"], band].append(r["duration_ms"])
    for node in simulate.NODES:  # enough requests in every band for a median and a p95
        assert all(len(durations[node, band]) >= 100 for band in BANDS), node

    def growth(node: str) -> float:
        long = durations[node, 8000] + durations[node, 32000]
        return statistics.median(long) / statistics.median(durations[node, 0])

    assert growth(simulate.L40_B.node) > 4
    assert growth(simulate.GPT_OSS.node) < 2
    assert growth(simulate.L40_B.node) > 2 * growth(simulate.L40_A.node)


def test_the_backups_take_over_while_the_main_node_is_down(
    week: list[dict[str, Any]], demo_store: Path
) -> None:
    down, up = simulate.outage(NOW)
    assert NOW - dt.timedelta(days=7) < down < up < NOW - dt.timedelta(hours=12)  # in the default ranges
    assert dt.timedelta(hours=2) <= up - down <= dt.timedelta(hours=6)
    inside = [r for r in served(demo_store) if down <= r["start_time"] < up]
    main = [r for r in inside if r["node"] == simulate.GPT_OSS.node]
    assert main and all(r["status"] == "failure" for r in main)
    backups = [r for r in inside if r["node"] in simulate.NODES[1:] and r["status"] == "success"]
    assert len(backups) > 3 * len(main)
    before = [r for r in served(demo_store) if down - (up - down) <= r["start_time"] < down]
    assert (
        sum(r["node"] == simulate.GPT_OSS.node for r in before) > len(before) / 2
    )  # the main node, as usual

    # the rows as LiteLLM writes them: the connection error, and the fallbacks in metadata
    naive = (down.replace(tzinfo=None), up.replace(tzinfo=None))
    window = [r for r in week if naive[0] <= r["startTime"] < naive[1] and not is_noise(r)]
    errors = [
        r["metadata"]["error_information"] for r in window if r["api_base"] == simulate.GPT_OSS.api_base
    ]
    assert {(e["error_class"], e["error_code"], e["llm_provider"]) for e in errors} >= {
        ("APIConnectionError", "500", "hosted_vllm")
    }
    fell_back = [
        r for r in window if r["metadata"].get("attempted_fallbacks", 0) >= 1 and r["status"] == "success"
    ]
    assert len(fell_back) >= 50
    for r in fell_back:
        assert r["model_group"] == simulate.L40_A.model_group and r["api_base"] != simulate.GPT_OSS.api_base
        assert r["metadata"]["original_model_group"] == simulate.GPT_OSS.model_group
    outside = [r for r in week if not naive[0] <= r["startTime"] < naive[1]]
    assert not any(r["metadata"].get("attempted_fallbacks") for r in outside)

    # and as the store keeps them: the backups' rows in the window say they stood in
    columns = [
        "start_time",
        "node",
        "status",
        "attempted_fallbacks",
        "original_model_group",
        "litellm_overhead_ms",
    ]
    stored = storeview.requests(demo_store).select(columns).to_pylist()
    tried = [r for r in stored if (r["attempted_fallbacks"] or 0) >= 1]
    assert tried and all(down <= r["start_time"] < up for r in tried)
    stood_in = [r for r in tried if r["status"] == "success"]
    assert {r["node"] for r in stood_in} == set(simulate.NODES[1:])
    assert {r["original_model_group"] for r in stood_in} == {simulate.GPT_OSS.model_group}
    overhead = [r["litellm_overhead_ms"] for r in stored if r["litellm_overhead_ms"] is not None]
    assert statistics.median(overhead) < 15 < max(overhead)  # a few ms; more where it fell back


def test_routed_rows_carry_the_routers_notes_as_litellm_writes_them(week: list[dict[str, Any]]) -> None:
    ok = [r for r in week if not is_noise(r) and r["status"] == "success"]
    for r in ok:
        meta = r["metadata"]
        assert type(meta["attempted_fallbacks"]) is int and type(meta["attempted_retries"]) is int
        assert meta["max_retries"] == simulate.MAX_RETRIES and meta["original_model_group"]
    plain = [
        r["metadata"]["litellm_overhead_time_ms"] for r in ok if r["completionStartTime"] == r["endTime"]
    ]
    plain = [ms for ms in plain if ms is not None]
    assert len(plain) > 1000 and all(isinstance(ms, float) for ms in plain)
    assert 1 < statistics.median(plain) < 15  # a few ms of LiteLLM's own
    retried = [r for r in ok if r["metadata"]["attempted_retries"] >= 1]
    assert 10 < len(retried) < len(ok) / 20


def test_load_drives_latency_past_three_seconds_on_a_node(demo_store: Path) -> None:
    """Issue 18's load table: latency per level of concurrency on a node, so that a
    stable concurrency can be read off. Short prompts only, so that what changes between
    levels is the load."""
    first_token: dict[tuple[str, int], list[float]] = collections.defaultdict(list)
    requests = storeview.requests(demo_store).to_pylist()
    for node in simulate.NODES:
        rows = sorted((r for r in requests if r["node"] == node), key=lambda r: r["start_time"])
        ends: list[dt.datetime] = []
        for r in rows:
            ends = [end for end in ends if end > r["start_time"]]
            ends.append(r["end_time"])
            streamed = r["completion_start_time"] < r["end_time"]
            if r["status"] == "success" and streamed and r["prompt_tokens"] < 2000:
                ms = (r["completion_start_time"] - r["start_time"]).total_seconds() * 1000
                first_token[node, min(len(ends), 6)].append(ms)

    def p95(node: str, level: int) -> float:
        return statistics.quantiles(first_token[node, level], n=20)[18]

    assert all(p95(node, 1) < 3000 for node in simulate.NODES)  # the demo does not look broken
    busy = [node for node in simulate.NODES if len(first_token[node, 6]) >= 20]
    assert any(p95(node, 6) > 3000 for node in busy)
    assert p95(simulate.GPT_OSS.node, 1) < 1000


def test_the_same_seed_gives_the_same_lab() -> None:
    first = list(simulate.simulate(days=0.5, end=NOW, seed=3))
    assert first == list(simulate.simulate(days=0.5, end=NOW, seed=3))
    assert first != list(simulate.simulate(days=0.5, end=NOW, seed=4))


def test_the_etl_drops_the_noise_and_keeps_every_request(week: list[dict[str, Any]], tmp_path: Path) -> None:
    summary = ingest_rows(Config(store=tmp_path / "s", nodes=simulate.node_rules()), week)
    noise = collections.Counter(is_noise(r) for r in week)
    assert summary.dropped["health_check"] == noise["health_check"]
    assert summary.dropped["master_key"] == noise["master_key"]
    stored = storeview.requests(tmp_path / "s")
    assert stored.num_rows == noise[None]
    assert set(stored["node"].to_pylist()) == set(simulate.NODES) | {"unknown"}
    assert "default_user_id" not in stored["user"].to_pylist()


def test_the_demo_store_is_marked_and_has_keys_with_budgets(demo_store: Path) -> None:
    assert demo.is_demo(demo_store) and demo.built_at(demo_store) == NOW
    keys = pq.read_table(demo_store / "keys.parquet")
    assert keys.num_rows == 2 * len(simulate.PEOPLE)
    spent = dict(zip(keys["key_alias"].to_pylist(), keys["spend"].to_pylist(), strict=True))
    assert spent["minji-main"] > spent["hyejin-main"] > 0
    used = pc.divide(keys["spend"], keys["max_budget"]).to_pylist()
    assert any(u is not None and u >= 0.8 for u in used)  # someone is close to their budget
    assert storeview.requests(demo_store).num_rows > 0


def test_a_demo_never_lands_in_a_real_store_nor_real_rows_in_a_demo(demo_store: Path, tmp_path: Path) -> None:
    real = tmp_path / "real"
    ingest_rows(Config(store=real), list(simulate.simulate(days=0.2, end=NOW)))
    before = sorted(p.relative_to(real) for p in real.rglob("*"))
    with pytest.raises(ConfigError, match="never writes into a real store"):
        demo.build(real, now=NOW, days=0.2)
    assert sorted(p.relative_to(real) for p in real.rglob("*")) == before
    config = load_config(None, source="postgresql://lab@127.0.0.1:1/litellm", store=demo_store, env={})
    with pytest.raises(ConfigError, match="is a demo store"):
        run_etl(config)


def test_the_dashboard_shows_the_demo_only_without_a_database_and_real_data(tmp_path: Path) -> None:
    empty, demo_path = tmp_path / "data", tmp_path / "demo"
    env = {"USAGE_DEMO_STORE": str(demo_path)}
    with_db = load_config(None, source="postgresql://lab@db:5432/litellm", store=empty, env={})
    assert demo_mode.store_to_show(with_db, env) == empty  # a lab's empty store: "run the ETL"
    assert not demo_path.exists()
    no_db = load_config(None, store=empty, env={})
    assert demo_mode.store_to_show(no_db, env) == demo_path and demo.is_demo(demo_path)
    ingest_rows(Config(store=empty), list(simulate.simulate(days=0.1, end=NOW)))
    assert demo_mode.store_to_show(no_db, env) == empty  # real data wins


def demo_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    for name in ("LITELLM_DATABASE_URL", "DATABASE_URL", "USAGE_CONFIG", "USAGE_ADMIN_PASSWORD_HASH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("USAGE_STORE", str(tmp_path / "data"))
    monkeypatch.setenv("USAGE_DEMO_STORE", str(tmp_path / "demo"))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def banner_shown(at: AppTest) -> bool:
    return any("Demo data" in w.value for w in at.warning)


def test_the_demo_says_so_before_and_after_signing_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = demo_app(tmp_path, monkeypatch)
    assert banner_shown(at)
    # once, in one box; and no password form when no password is configured, only the way in
    # a visitor has (never a command to run on a server they do not have)
    boxes = [box.value for box in (*at.warning, *at.info, *at.error, *at.success)]
    assert sum("demo data" in box.lower() for box in boxes) == 1
    assert [f.proto.label for f in at.get("form_submit_button")] == ["Sign in"]  # the students' form only
    assert any("enter as the administrator with the button above" in i.value for i in at.info)
    assert not any("hash-password" in box for box in boxes)
    at.button(key="demo_admin").click().run()
    assert not at.exception, at.exception
    assert banner_shown(at)
    assert at.metric and at.get("plotly_chart")  # the overview, filled
    assert "minji.park" in repr(at._tree)


def test_a_simulated_student_signs_in_with_a_made_up_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = demo_app(tmp_path, monkeypatch)
    shown_keys = "".join(c.value for c in at.code)
    assert demo.demo_key("minji.park") in shown_keys
    at.text_input[0].input(demo.demo_key("minji.park"))
    submit: Any = at.get("form_submit_button")[0]
    submit.click().run()
    assert not at.exception, at.exception
    assert at.session_state["identity"].user_id == "minji.park"
    assert banner_shown(at)
    assert "junho.lee" not in repr(at._tree)  # peers are anonymous in the demo too


def test_the_demo_administrator_never_carries_over_to_the_real_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dashboard runs without the database's address: until the ETL's first run the
    real store is empty and the demo is shown, with its one-click administrator. Once
    the real store fills, that session must be signed out, not shown the lab's data."""
    at = demo_app(tmp_path, monkeypatch)
    at.button(key="demo_admin").click().run()
    assert at.metric and "minji.park" in repr(at._tree)  # inside the demo
    known_store.build(tmp_path / "data")  # the ETL's first run fills the real store
    at.run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Sign in"] and "identity" not in at.session_state
    assert not at.metric and "alice" not in repr(at._tree)
    assert not any("Demo data" in w.value for w in at.warning)
