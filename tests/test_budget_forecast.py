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

from etl.config import Config
from etl.load import write_snapshot
from etl.run import ingest_rows
from etl.store import KEYS_FILE, KEYS_SCHEMA, USERS_FILE, USERS_SCHEMA
from queries import pages
from queries.runner import StoreReader, reader
from tests import known_store

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
def budgets(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
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
    assert list(budgets.index[:2]) == ["fresh-laptop", "runner-laptop"]


def test_a_store_without_litellms_key_list_has_no_budgets_and_no_error(tmp_path: Path) -> None:
    """A store without LiteLLM's key list has no budgets to forecast, and no error."""
    store = tmp_path / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), ROWS[:1])
    assert pages.budgets(reader(store, "UTC")).empty
