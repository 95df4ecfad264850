"""Each budget's share used and forecast run-out in the ETL's metrics file, from the same
query as the Budgets page (queries/budgets.sql), and the alert rule deploy/ ships over
them (issue 17, part 5): a store whose every number is known, parsed as Prometheus
parses it."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from prometheus_client.parser import text_string_to_metric_families

from contract.store import KEYS_FILE, KEYS_SCHEMA, USERS_FILE, USERS_SCHEMA
from etl import health
from etl.load import write_snapshot
from etl.run import ingest_rows
from ops.cli import budgets_in
from settings.config import Config
from tests import known_store
from tests.litellm_db import LiteLLMDatabase
from tests.test_budget_forecast import COPIED, key, spent
from tests.test_etl_cli import REPO, cli

UTC = dt.UTC
RULES = REPO / "deploy" / "usage-budget-alerts.rules.yml"
HOSTILE = 'evil"} llm_usage_budget_used_ratio{user="x\\"} 0\nfake 1'


ROWS = [
    *spent("runner", 4, 1.50, n=5),
    *spent("runner", 9, 2.00, n=8),  # $3.50 in the week before the copy: $0.50 a day
    *spent("soon", 9, 7.00, n=7),  # $1.00 a day
    *spent("laster", 6, 1.40, n=2),  # $0.20 a day
]


def hashed(name: str) -> str:
    return known_store.key_of(name)


DEC_20, DEC_30 = dt.datetime(2026, 12, 20, tzinfo=UTC), dt.datetime(2026, 12, 30, tzinfo=UTC)
KEYS = [
    key("runner", spend=6.0, max_budget=10.0, budget_reset_at=DEC_20),  # runs out Dec 18, 12:00
    key("soon", spend=9.5, max_budget=10.0, budget_reset_at=DEC_30),  # $0.50 left: 12 h
    key("laster", spend=2.0, max_budget=10.0, budget_reset_at=dt.datetime(2026, 12, 12, tzinfo=UTC)),
    key("nobody", spend=0.4, budget_duration=None),  # no budget: no series
    key("mallory", key_alias=HOSTILE, spend=1.2, max_budget=1.0, budget_reset_at=DEC_30),  # used up
    # two keys of one person without an alias, and two with the same alias: apart by hash
    key("twin", api_key_hash=hashed("twin-1"), key_alias=None, spend=1.0, max_budget=4.0),
    key("twin", api_key_hash=hashed("twin-2"), key_alias="", spend=3.0, max_budget=4.0),
    key("twin", api_key_hash=hashed("twin-3"), key_alias="twin-box", spend=1.0, max_budget=8.0),
    key("twin", api_key_hash=hashed("twin-4"), key_alias="twin-box", spend=2.0, max_budget=8.0),
    key("orphan", user_id=None, key_alias=None, spend=1.0, max_budget=2.0),  # no alias, no user
]


def user(user_id: str, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(USERS_SCHEMA.names)
    return row | {"user_id": user_id, "budget_duration": "30d", "snapshot_at": COPIED} | values


DEC_31 = dt.datetime(2026, 12, 31, tzinfo=UTC)
USERS = [
    user("runner", spend=9.0, max_budget=20.0, budget_reset_at=DEC_31),  # $11 at $0.50: lasts
    user("soon", spend=9.8, max_budget=10.0, budget_reset_at=DEC_31),  # $0.20 at $1.00: 4.8 h
    user("laster"),  # no budget of their own
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("budget-metrics") / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), ROWS)
    write_snapshot(store / KEYS_FILE, pa.Table.from_pylist(KEYS, schema=KEYS_SCHEMA))
    write_snapshot(store / USERS_FILE, pa.Table.from_pylist(USERS, schema=USERS_SCHEMA))
    return store


def parsed(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Metric name -> its samples (labels, value), as Prometheus reads the file."""
    return {
        family.name: [(dict(s.labels), s.value) for s in family.samples]
        for family in text_string_to_metric_families(text)
    }


def series(text: str, name: str) -> dict[tuple[str, str, str], float]:
    """(budget, key_alias, user) -> value of metric `name`; an absent label reads ''."""
    return {
        (labels["budget"], labels.get("key_alias", ""), labels.get("user", "")): value
        for labels, value in parsed(text).get(name, [])
    }


@pytest.fixture(scope="module")
def text(store: Path) -> str:
    """The metrics file of a run that finished when the key list was copied."""
    budgets = budgets_in(store, "Asia/Seoul")
    assert budgets is not None
    return health.render(health.Attempt(COPIED, ok=True, seconds=1.0), [], budgets)


def key_series(alias: str, user_id: str) -> tuple[str, str, str]:
    return ("key", alias, user_id)


def test_a_key_that_runs_out_before_its_reset(text: str) -> None:
    """$4 left at $0.50 a day: 8 days, Dec 18 12:00, before the reset on Dec 20."""
    runner = key_series("runner-laptop", "runner")
    assert series(text, "llm_usage_budget_used_ratio")[runner] == 0.6
    assert series(text, "llm_usage_budget_runout_hours")[runner] == 192
    assert series(text, "llm_usage_budget_reset_timestamp_seconds")[runner] == DEC_20.timestamp()
    assert series(text, "llm_usage_budget_runout_hours")[key_series("soon-laptop", "soon")] == 12


def test_a_key_that_lasts_until_its_reset_has_no_run_out(text: str) -> None:
    laster = key_series("laster-laptop", "laster")
    assert series(text, "llm_usage_budget_used_ratio")[laster] == 0.2
    assert laster not in series(text, "llm_usage_budget_runout_hours")
    reset = dt.datetime(2026, 12, 12, tzinfo=UTC).timestamp()
    assert series(text, "llm_usage_budget_reset_timestamp_seconds")[laster] == reset


def test_a_key_without_a_budget_has_no_series(text: str) -> None:
    assert "nobody-laptop" not in text
    assert not [s for s in series(text, "llm_usage_budget_used_ratio") if s[2] == "nobody"]


def test_a_persons_own_budget_is_a_series_of_its_own(text: str) -> None:
    """Paced by all their keys; named by their user id, with no key alias."""
    used = series(text, "llm_usage_budget_used_ratio")
    hours = series(text, "llm_usage_budget_runout_hours")
    assert used[("user", "", "runner")] == 0.45
    assert ("user", "", "runner") not in hours  # it lasts until Dec 31
    assert used[("user", "", "soon")] == 0.98
    assert hours[("user", "", "soon")] == 4.8  # $0.20 left at $1.00 a day
    assert not [s for s in used if s[0] == "user" and s[2] == "laster"]


def test_a_hostile_alias_is_escaped_and_reads_back_as_itself(text: str) -> None:
    mallory = key_series(HOSTILE, "mallory")
    assert series(text, "llm_usage_budget_used_ratio")[mallory] == 1.2
    escaped = 'evil\\"} llm_usage_budget_used_ratio{user=\\"x\\\\\\"} 0\\nfake 1'
    assert f'key_alias="{escaped}"' in text
    assert not [line for line in text.splitlines() if line.startswith("fake")]  # no sample of its own


def test_keys_sharing_a_name_stay_apart_and_no_key_is_shown(text: str) -> None:
    used = series(text, "llm_usage_budget_used_ratio")
    twin = {alias: v for (budget, alias, user), v in used.items() if (budget, user) == ("key", "twin")}
    short = {n: f"#{hashed(n)[:8]}" for n in ("twin-1", "twin-2", "twin-3", "twin-4", "orphan")}
    assert twin == {
        short["twin-1"]: 0.25,
        short["twin-2"]: 0.75,
        f"twin-box {short['twin-3']}": 0.125,
        f"twin-box {short['twin-4']}": 0.25,
    }
    assert used[("key", short["orphan"], "")] == 0.5
    for name in ("runner", "soon", "twin-1", "twin-2", "twin-3", "twin-4", "orphan"):
        assert hashed(name)[:9] not in text and known_store.raw_key(name) not in text


def test_cardinality_is_one_series_per_budget(text: str) -> None:
    with_budget = sum(k["max_budget"] is not None for k in KEYS) + 2  # and two persons' own
    assert len(series(text, "llm_usage_budget_used_ratio")) == with_budget
    assert parsed(text)["llm_usage_budget_metrics_success"] == [({}, 1.0)]


def test_without_a_key_list_the_budgets_are_skipped_and_the_health_stays(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = tmp_path / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), ROWS[:1])
    assert budgets_in(store, "UTC") is None
    assert "no budget metrics: the store has no copy of LiteLLM's key list yet" in caplog.text
    got = parsed(health.render(health.Attempt(COPIED, ok=True, seconds=1.0), [], None))
    assert got["llm_usage_budget_metrics_success"] == [({}, 0.0)]
    assert got["llm_usage_etl_last_run_success"] == [({}, 1.0)]
    assert not got["llm_usage_budget_used_ratio"] and not got["llm_usage_budget_runout_hours"]


def test_an_unreadable_key_list_or_store_skips_the_budgets_without_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = tmp_path / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), ROWS[:1])
    (store / KEYS_FILE).write_bytes(b"PAR1 not parquet")
    assert budgets_in(store, "UTC") is None
    assert "no budget metrics: keys.parquet unreadable" in caplog.text
    not_a_store = tmp_path / "file"
    not_a_store.write_text("not a directory", encoding="utf-8")
    assert budgets_in(not_a_store, "UTC") is None


# The alert rule, without promtool: its expressions are `metric op number`, evaluated
# here over the file, and its annotations name only labels the file writes.
RULE = re.compile(r"^\s*expr: (llm_usage_[a-z_]+) (<|<=|==|>=|>) ([0-9.]+)\s*$", re.MULTILINE)
OPS = {
    "<": float.__lt__,
    "<=": float.__le__,
    "==": float.__eq__,
    ">=": float.__ge__,
    ">": float.__gt__,
}


def alerts(text: str) -> dict[str, set[tuple[str, str, str]]]:
    """alert name -> the series it fires for."""
    rules = RULES.read_text(encoding="utf-8")
    names = re.findall(r"^\s*- alert: (\w+)\s*$", rules, re.MULTILINE)
    exprs = RULE.findall(rules)
    assert len(names) == len(exprs) == rules.count("expr:"), "every rule is `metric op number`"
    out = {}
    for alert, (metric, op, threshold) in zip(names, exprs, strict=True):
        samples = parsed(text)[metric]  # the file has every family, with no series or some
        out[alert] = {
            (lb.get("budget", ""), lb.get("key_alias", ""), lb.get("user", ""))
            for lb, value in samples
            if OPS[op](float(value), float(threshold))
        }
    return out


def test_the_alert_fires_a_day_before_a_run_out_and_not_for_budgets_that_last(text: str) -> None:
    fired = alerts(text)
    assert fired["LlmUsageBudgetRunsOutWithinADay"] == {("key", "soon-laptop", "soon"), ("user", "", "soon")}
    assert fired["LlmUsageBudgetUsedUp"] == {("key", HOSTILE, "mallory")}
    assert fired["LlmUsageBudgetMetricsSkipped"] == set()
    skipped = health.render(health.Attempt(COPIED, ok=True, seconds=1.0), [], None)
    assert alerts(skipped)["LlmUsageBudgetMetricsSkipped"] == {("", "", "")}


def test_the_rules_name_the_metrics_and_labels_the_file_writes(text: str) -> None:
    rules = RULES.read_text(encoding="utf-8")
    written = parsed(text)
    assert set(re.findall(r"llm_usage_[a-z_]+", rules)) <= set(written)
    labels = {name for samples in written.values() for lb, _ in samples for name in lb}
    assert set(re.findall(r"\$labels\.(\w+)", rules)) == {"key_alias", "user"} <= labels
    assert "budget" in labels


def test_a_run_writes_the_budgets_of_the_key_list_it_copied(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    """End to end: LiteLLM's key, a real run, its metrics file. $7 over the last day of the
    week before the copy is $1 a day; $0.50 left: the run-out is 12 h after the copy."""
    start = (dt.datetime.now(UTC) - dt.timedelta(days=1)).replace(tzinfo=None, microsecond=0)
    litellm.insert_spend_logs(
        known_store.request(
            "llamacpp_non_streamed", "soon", start + dt.timedelta(minutes=i), request_id=f"soon-{i}",
            usage=(100, 0, 10, 0), spend=1.0, duration_ms=1000,
        )
        for i in range(7)
    )  # fmt: skip
    reset = dt.datetime.now(UTC) + dt.timedelta(days=20)
    litellm.execute(
        'INSERT INTO "LiteLLM_VerificationToken" (token, key_name, key_alias, user_id, spend, max_budget, '
        "budget_duration, budget_reset_at) VALUES (%s, 'sk-...soon', 'soon-laptop', 'soon', 9.5, 10.0, "
        "'30d', %s), (%s, 'sk-...body', 'nobody-laptop', 'nobody', 1.0, NULL, NULL, NULL)",
        [known_store.key_of("soon"), reset, known_store.key_of("nobody")],
    )
    store, prom = tmp_path / "store", tmp_path / "llm_usage_etl.prom"
    result = cli("run", "--source", litellm.url, "--store", str(store), "--metrics-file", str(prom))
    assert result.returncode == 0, result.stderr
    text = prom.read_text(encoding="utf-8")
    copied = pq.read_table(store / KEYS_FILE)["snapshot_at"][0].as_py()
    finished = dt.datetime.fromtimestamp(parsed(text)["llm_usage_etl_last_run_timestamp_seconds"][0][1], UTC)
    runs_out = copied + dt.timedelta(hours=12)
    soon = key_series("soon-laptop", "soon")
    assert series(text, "llm_usage_budget_runout_hours")[soon] == pytest.approx(
        (runs_out - finished).total_seconds() / 3600, abs=1e-4
    )
    assert series(text, "llm_usage_budget_used_ratio") == {soon: 0.95}
    assert series(text, "llm_usage_budget_reset_timestamp_seconds")[soon] == pytest.approx(reset.timestamp())
    assert parsed(text)["llm_usage_budget_metrics_success"] == [({}, 1.0)]
    assert alerts(text)["LlmUsageBudgetRunsOutWithinADay"] == {soon}
