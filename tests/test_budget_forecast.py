"""Whether each budget lasts until LiteLLM resets it, at the pace of the last 7 days (or
of the period so far, when it began within them): queries/budgets.sql over a store whose
every number is known (issue 17, part 3)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from contract.store import KEYS_FILE, KEYS_SCHEMA, USERS_FILE, USERS_SCHEMA
from dashboard.auth import Identity
from etl.load import write_snapshot
from etl.run import ingest_rows
from queries import pages
from queries.runner import StoreReader, reader
from settings.config import Config
from tests import known_store
from tests.test_pages import APP

UTC = dt.UTC
COPIED = dt.datetime(2026, 12, 10, 12, 0, tzinfo=UTC)  # when the ETL copied the key list
# the pace is measured over the week before: Dec 3, 12:00 UTC to the copy


def spent(user: str, day: int, spend: float, n: int = 1) -> list[dict[str, Any]]:
    """`n` requests of `user` on December `day` (10:00 UTC on), `spend` dollars in all."""
    return [
        known_store.request(
            "llamacpp_non_streamed",
            user,
            dt.datetime(2026, 12, day, 10, i),
            request_id=f"{user}-{day}-{i}",
            usage=(100, 0, 10, 0),
            spend=spend / n,
            duration_ms=1000,
        )
        for i in range(n)
    ]


ROWS = [
    *spent("runner", 2, 1.00),  # before the week: not its pace
    *spent("runner", 4, 1.50, n=5),
    *spent("runner", 9, 2.00, n=8),  # $3.50 in the week: $0.50 a day
    *spent("laster", 6, 1.40, n=2),  # $0.20 a day
    *spent("fresh", 9, 1.00),  # its period began on Dec 8, 12:00: LiteLLM's spend counts
    *spent("idler", 1, 1.00),  # nothing in the week
]


def key(user: str, **values: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(KEYS_SCHEMA.names)
    return (
        row
        | {
            "api_key_hash": known_store.key_of(user),
            "key_alias": f"{user}-laptop",
            "user_id": user,
            "blocked": False,
            "snapshot_at": COPIED,
            "budget_duration": "30d",
        }
        | values
    )


KEYS = [
    key("runner", spend=6.0, max_budget=10.0, budget_reset_at=dt.datetime(2026, 12, 20, tzinfo=UTC)),
    key("laster", spend=2.0, max_budget=10.0, budget_reset_at=dt.datetime(2026, 12, 12, tzinfo=UTC)),
    key(
        "fresh",
        spend=1.0,
        max_budget=2.0,
        budget_duration="7d",
        budget_reset_at=dt.datetime(2026, 12, 15, 12, tzinfo=UTC),
    ),
    key("nobody", spend=0.4, budget_duration=None),  # no budget
    key("overdue", spend=1.0, max_budget=5.0, budget_reset_at=dt.datetime(2026, 12, 9, tzinfo=UTC)),
    key("idler", spend=1.0, max_budget=5.0, budget_reset_at=dt.datetime(2026, 12, 30, tzinfo=UTC)),
    key("spender", spend=1.2, max_budget=1.0, budget_reset_at=dt.datetime(2026, 12, 30, tzinfo=UTC)),
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("forecast") / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), ROWS)
    write_snapshot(store / KEYS_FILE, pa.Table.from_pylist(KEYS, schema=KEYS_SCHEMA))
    runner: dict[str, Any] = dict.fromkeys(USERS_SCHEMA.names)
    runner |= {
        "user_id": "runner",
        "spend": 9.0,
        "max_budget": 20.0,
        "budget_duration": "30d",
        "budget_reset_at": dt.datetime(2026, 12, 31, tzinfo=UTC),
        "snapshot_at": COPIED,
    }
    write_snapshot(store / USERS_FILE, pa.Table.from_pylist([runner], schema=USERS_SCHEMA))
    return store


@pytest.fixture(scope="module")
def budgets(store: Path) -> pd.DataFrame:
    read: StoreReader = reader(store, "Asia/Seoul")
    return pages.budgets(read).set_index("key_alias")


def test_a_key_on_pace_to_run_out_before_its_reset_says_when(budgets: pd.DataFrame) -> None:
    runner = budgets.loc["runner-laptop"]
    assert runner["burn_per_day"] == pytest.approx(0.5)  # the week's, not Dec 2's
    assert runner["forecast"] == "runs_out"
    # $4 left at $0.50 a day: 8 days after the copy, two before the reset on Dec 20
    assert runner["runs_out_at"] == pd.Timestamp("2026-12-18 12:00", tz="UTC")


def test_a_key_that_lasts_until_its_reset(budgets: pd.DataFrame) -> None:
    laster = budgets.loc["laster-laptop"]
    assert laster["burn_per_day"] == pytest.approx(0.2)
    assert laster["forecast"] == "lasts"
    assert laster["runs_out_at"] == pd.Timestamp("2027-01-19 12:00", tz="UTC")  # $8 at $0.20: 40 days


def test_a_period_begun_within_the_week_is_paced_by_its_own_spend(budgets: pd.DataFrame) -> None:
    """Its 7-day period began on Dec 8, 12:00: LiteLLM's $1.00 since then, over two days."""
    fresh = budgets.loc["fresh-laptop"]
    assert fresh["burn_per_day"] == pytest.approx(0.5)
    assert fresh["forecast"] == "runs_out"
    assert fresh["runs_out_at"] == pd.Timestamp("2026-12-12 12:00", tz="UTC")


def test_keys_without_a_budget_a_pace_or_anything_left_say_so(budgets: pd.DataFrame) -> None:
    assert budgets.loc["nobody-laptop", "forecast"] == "no_budget"
    assert budgets.loc["idler-laptop", "forecast"] == "idle"  # its only request was Dec 1
    assert budgets.loc["spender-laptop", "forecast"] == "spent"
    # the reset time has passed and LiteLLM has not reset the key yet: no forecast from it
    assert budgets.loc["overdue-laptop", "forecast"] == "reset_due"
    assert (
        budgets[["runs_out_at"]].loc[["nobody-laptop", "idler-laptop", "spender-laptop"]].isna().all().all()
    )


def test_a_persons_own_budget_is_paced_by_all_their_keys(budgets: pd.DataFrame) -> None:
    runner = budgets.loc["runner-laptop"]
    assert runner["user_burn_per_day"] == pytest.approx(0.5)
    assert runner["user_forecast"] == "lasts"  # $11 left at $0.50 a day: Jan 1, after the Dec 31 reset
    assert runner["user_runs_out_at"] == pd.Timestamp("2027-01-01 12:00", tz="UTC")
    assert budgets.loc["laster-laptop", "user_forecast"] == "no_budget"


def test_the_keys_that_run_out_soonest_come_first(budgets: pd.DataFrame) -> None:
    # used up first: it has run out already
    assert list(budgets.index[:3]) == ["spender-laptop", "fresh-laptop", "runner-laptop"]


def test_a_store_without_litellms_key_list_has_no_budgets_and_no_error(tmp_path: Path) -> None:
    """A store without LiteLLM's key list has no budgets to forecast, and no error."""
    store = tmp_path / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), ROWS[:1])
    assert pages.budgets(reader(store, "UTC")).empty


def app(store: Path, monkeypatch: pytest.MonkeyPatch, identity: Identity, lang: str = "en") -> AppTest:
    monkeypatch.setenv("USAGE_STORE", str(store))
    monkeypatch.setenv("USAGE_TIMEZONE", "Asia/Seoul")
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["identity"] = identity
    at.query_params["lang"] = lang
    at.run()
    assert not at.exception, at.exception
    return at


def student(user: str) -> Identity:
    return Identity(role="student", name=user, keys=(known_store.key_of(user),), key=known_store.key_of(user))


def texts(at: AppTest) -> list[str]:
    return [str(m.value) for m in at.markdown]


def test_a_student_reads_when_their_budget_runs_out_in_one_sentence(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In Seoul time: $4 left at $0.50 a day runs out on Dec 18, 21:00, a day and a half
    before the reset on Dec 20, 09:00; their own budget across keys lasts until its reset."""
    page = app(store, monkeypatch, student("runner"))
    assert [h.value for h in page.main.header] == ["My usage"]  # the page says which it is
    shown = texts(page)
    assert (
        "At this pace ($0.50 a day) it runs out around 2026-12-18 21:00, "
        "36 h before its reset on 2026-12-20 09:00."
    ) in shown
    assert "At this pace ($0.50 a day) it lasts until its reset on 2026-12-31 09:00." in shown
    # only their own key's figures: the other keys' paces appear nowhere on the page
    assert not [text for text in shown if "$0.20 a day" in text or "used up" in text]


def test_a_student_reads_their_forecast_in_korean(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shown = texts(app(store, monkeypatch, student("laster"), lang="ko"))
    assert "지금 속도(하루 $0.20)라면 2026년 12월 12일 09:00 초기화 때까지 남습니다." in shown


def test_students_without_recent_spend_or_past_their_reset_are_told_so(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "No spend in the last 7 days: nothing to forecast from." in texts(
        app(store, monkeypatch, student("idler"))
    )
    assert "Its reset was due on 2026-12-09 09:00; LiteLLM resets it at its next budget check." in texts(
        app(store, monkeypatch, student("overdue"))
    )
    assert "It is used up until its reset on 2026-12-30 09:00." in texts(
        app(store, monkeypatch, student("spender"))
    )


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_budgets_page_puts_the_soonest_run_out_first_with_its_pace(
    store: Path, monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    at = app(store, monkeypatch, Identity(role="admin", name="admin"), lang)
    at._page_hash = next(h for h, p in at._registered_pages.items() if p["url_pathname"] == "budgets")
    at.run()
    assert not at.exception, at.exception
    # no key here has a rate limit: no limits table (tests/test_key_limits.py has one)
    standing, pace, people = (getattr(d.value, "data", d.value) for d in at.dataframe)
    assert list(pace["key_alias"][:3]) == ["spender-laptop", "fresh-laptop", "runner-laptop"]
    assert list(standing["key_alias"]) == list(pace["key_alias"])
    runs_out = {"en": "runs out before the reset", "ko": "초기화 전 소진"}[lang]
    assert list(standing["forecast"][1:3]) == [runs_out, runs_out]  # beside the share used
    assert pace["burn_per_day"].iloc[2] == pytest.approx(0.5)
    assert pace["runs_out_at"].iloc[2] == pd.Timestamp("2026-12-18 21:00", tz="Asia/Seoul")
    statuses = dict(zip(standing["key_alias"], standing["forecast"], strict=True))
    expected = {
        "en": ["no budget", "no recent spend", "used up", "reset overdue", "lasts until the reset"],
        "ko": ["예산 없음", "최근 사용 없음", "모두 사용", "초기화 지연", "초기화까지 충분"],
    }[lang]
    keys = ["nobody-laptop", "idler-laptop", "spender-laptop", "overdue-laptop", "laster-laptop"]
    assert [statuses[k] for k in keys] == expected
    # the laster's pace would run out on Jan 19, after its reset on Dec 12: no date shown
    assert pace.set_index("key_alias")["runs_out_at"].isna()["laster-laptop"]
    # a person's own budget across keys: the runner's lasts until Dec 31
    assert list(people["user_id"]) == ["runner"]
    assert people["user_forecast"].iloc[0] == {"en": "lasts until the reset", "ko": "초기화까지 충분"}[lang]
