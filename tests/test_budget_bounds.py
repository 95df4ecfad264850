"""Budgets hold for any value LiteLLM can store (issue 27, point 1): a large budget with one
tiny request in the week (a run-out centuries away), periods and budgets no one could mean.
One key's values never fail the Budgets page, its student's page or the metrics file: the
others' rows and series are there, and the bad key is named."""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from contract.store import KEYS_FILE, KEYS_SCHEMA, USERS_FILE, USERS_SCHEMA
from dashboard.auth import Identity
from etl import health
from etl.load import write_snapshot
from etl.run import ingest_rows
from ops.cli import budgets_in
from queries import pages
from queries.runner import reader
from settings.config import Config
from tests import known_store
from tests.test_budget_forecast import COPIED, app, key, spent, student, texts
from tests.test_budget_metrics import parsed, series

UTC = dt.UTC
DEC_30 = dt.datetime(2026, 12, 30, tzinfo=UTC)

ROWS = [
    *spent("tiny", 8, 0.000005),  # the only request of the week: $0.000005
    *spent("runner", 9, 3.50, n=7),  # $0.50 a day: an ordinary key beside the others
    *spent("eternal", 9, 0.70),
    *spent("longperiod", 9, 0.70),
    *spent("hugeseconds", 9, 0.70),
    *spent("manymonths", 9, 0.70),
    *spent("infinite", 9, 0.70),
    *spent("nan", 9, 0.70),
    *spent("negative", 9, 0.70),
]

KEYS = [
    key("tiny", spend=0.000005, max_budget=100.0, budget_reset_at=DEC_30),
    key("runner", spend=6.0, max_budget=10.0, budget_reset_at=dt.datetime(2026, 12, 20, tzinfo=UTC)),
    # no reset at all, and a run-out ~10^7 years away at its pace
    key("eternal", spend=0.7, max_budget=1e9, budget_reset_at=None, budget_duration=None),
    key("longperiod", spend=0.7, max_budget=10.0, budget_duration="3000000000d", budget_reset_at=DEC_30),
    key("hugeseconds", spend=0.7, max_budget=10.0, budget_duration="99999999999999999999s"),
    key("manymonths", spend=0.7, max_budget=10.0, budget_duration="2000000000mo", budget_reset_at=DEC_30),
    key("infinite", spend=0.7, max_budget=math.inf, budget_reset_at=DEC_30),
    key("nan", spend=0.7, max_budget=math.nan, budget_reset_at=DEC_30),
    key("negative", spend=0.7, max_budget=-5.0, budget_reset_at=DEC_30),
]


def user(user_id: str, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(USERS_SCHEMA.names)
    return row | {"user_id": user_id, "snapshot_at": COPIED} | values


USERS = [
    user("tiny", spend=0.000005, max_budget=1e12, budget_duration="30d", budget_reset_at=DEC_30),
    user("longperiod", spend=0.7, max_budget=math.inf, budget_duration="9999999999999999999999w"),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("budget-bounds") / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), ROWS)
    write_snapshot(store / KEYS_FILE, pa.Table.from_pylist(KEYS, schema=KEYS_SCHEMA))
    write_snapshot(store / USERS_FILE, pa.Table.from_pylist(USERS, schema=USERS_SCHEMA))
    return store


@pytest.fixture(scope="module")
def budgets(store: Path) -> pd.DataFrame:
    return pages.budgets(reader(store, "Asia/Seoul")).set_index("key_alias")


def test_a_tiny_pace_against_a_large_budget_lasts_until_the_reset(budgets: pd.DataFrame) -> None:
    """$100 at $0.000005 a week: 385 million years. Not before the reset, and no date."""
    tiny = budgets.loc["tiny-laptop"]
    assert tiny["forecast"] == "lasts"
    assert pd.isna(tiny["runs_out_at"])
    assert tiny["user_forecast"] == "lasts"
    assert pd.isna(tiny["user_runs_out_at"])
    assert pd.isna(tiny["budget_problem"])


def test_a_run_out_beyond_any_date_without_a_reset_lasts(budgets: pd.DataFrame) -> None:
    eternal = budgets.loc["eternal-laptop"]
    assert eternal["forecast"] == "lasts"
    assert pd.isna(eternal["runs_out_at"])


def test_the_other_keys_are_forecast_as_ever(budgets: pd.DataFrame) -> None:
    runner = budgets.loc["runner-laptop"]
    assert runner["forecast"] == "runs_out"
    assert runner["runs_out_at"] == pd.Timestamp("2026-12-18 12:00", tz="UTC")


def test_periods_no_one_could_mean_are_named_and_the_budget_still_counts(budgets: pd.DataFrame) -> None:
    for alias, duration in [
        ("longperiod-laptop", "3000000000d"),
        ("hugeseconds-laptop", "99999999999999999999s"),
        ("manymonths-laptop", "2000000000mo"),
    ]:
        row = budgets.loc[alias]
        assert row["budget_problem"] == "period", alias
        assert row["budget_setting"] == duration
        # the budget itself is fine: its share and what is left are shown
        assert row["budget_used"] == pytest.approx(0.07)
        assert row["budget_left"] == pytest.approx(9.3)
        assert row["forecast"] in ("lasts", "runs_out")


def test_budgets_no_one_could_mean_are_named_and_not_forecast(budgets: pd.DataFrame) -> None:
    for alias, setting in [("infinite-laptop", "inf"), ("nan-laptop", "nan"), ("negative-laptop", "-5.0")]:
        row = budgets.loc[alias]
        assert row["budget_problem"] == "budget", alias
        assert row["budget_setting"] == setting
        assert row["forecast"] == "invalid"
        assert pd.isna(row["budget_used"]) and pd.isna(row["budget_left"]) and pd.isna(row["runs_out_at"])
    # a person's own budget as well: infinite, and a period of 10^22 weeks
    person = budgets.loc["longperiod-laptop"]
    assert person["user_forecast"] == "invalid"
    assert person["user_budget_problem"] == "budget"


def test_the_metrics_file_carries_every_other_series_and_names_the_bad_keys(store: Path) -> None:
    found = budgets_in(store, "Asia/Seoul")
    assert found is not None
    text = health.render(health.Attempt(COPIED, ok=True, seconds=1.0), [], found)
    assert parsed(text)["llm_usage_budget_metrics_success"] == [({}, 1)]
    runout = series(text, "llm_usage_budget_runout_hours")
    # the ones that run out: the runner before its reset, and the key without a reset
    # (its period cannot be read) at the week's $0.10 a day, $9.30 left: 93 days
    assert runout == {
        ("key", "runner-laptop", "runner"): 192,
        ("key", "hugeseconds-laptop", "hugeseconds"): 2232,
    }
    used = series(text, "llm_usage_budget_used_ratio")
    assert used[("key", "tiny-laptop", "tiny")] == 0  # 5e-8, written to six digits
    assert used[("key", "longperiod-laptop", "longperiod")] == 0.07  # its budget counts
    assert ("key", "infinite-laptop", "infinite") not in used
    invalid = {
        (labels["key_alias"] if labels["budget"] == "key" else labels["user"], labels["reason"])
        for labels, value in parsed(text)["llm_usage_budget_invalid"]
        if value == 1
    }
    assert invalid == {
        ("longperiod-laptop", "period"),
        ("hugeseconds-laptop", "period"),
        ("manymonths-laptop", "period"),
        ("infinite-laptop", "budget"),
        ("nan-laptop", "budget"),
        ("negative-laptop", "budget"),
        ("longperiod", "budget"),
    }
    assert "no series for a budget that lasts until its reset" in text


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_budgets_page_shows_every_key_and_names_the_bad_ones(
    store: Path, monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    at = app(store, monkeypatch, Identity(role="admin", name="admin"), lang)
    at._page_hash = next(h for h, p in at._registered_pages.items() if p["url_pathname"] == "budgets")
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    standing, pace, *_ = (getattr(d.value, "data", d.value) for d in at.dataframe)
    assert len(standing) == len(KEYS)
    statuses = dict(zip(standing["key_alias"], standing["forecast"], strict=True))
    assert list(pace["key_alias"]) == list(standing["key_alias"])
    unreadable = {"en": "budget not understood", "ko": "예산 값 오류"}[lang]
    assert statuses["infinite-laptop"] == unreadable
    assert statuses["tiny-laptop"] == {"en": "lasts until the reset", "ko": "초기화까지 충분"}[lang]
    shown = " ".join(str(c.value) for c in at.caption) + " ".join(texts(at))
    assert "3000000000d" in shown and "infinite-laptop" in shown


def test_a_students_page_with_a_tiny_pace_says_it_lasts(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = app(store, monkeypatch, student("tiny"))
    assert not page.error, [e.value for e in page.error]
    assert any(text.startswith("At this pace") and "lasts until its reset" in text for text in texts(page))


def test_a_students_page_with_an_unreadable_budget_says_so(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = app(store, monkeypatch, student("infinite"))
    assert not page.error, [e.value for e in page.error]
    assert "LiteLLM's budget for this key cannot be read (inf): no forecast." in texts(page)
