"""Adoption by client (issue 32, part 3): active users per client per day, week and month,
and when each person first used each client, on a store whose every visit is known."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import pytest

from dashboard import figures
from etl.run import ingest_rows
from queries.filters import Filters
from queries.runner import StoreReader
from queries.scope import ScopedReader
from settings.config import Config
from tests import known_store, test_pages

SEOUL = "Asia/Seoul"
OPENCODE, CLAUDE = "opencode/0.15.2", "claude-cli/2.0.14 (external, cli)"


def visit(user: str, agent: str, start: dt.datetime, n: int = 1) -> list[dict[str, Any]]:
    return [
        known_store.request(
            "vllm_streamed_reasoning_cached",
            user,
            start + dt.timedelta(minutes=i),
            request_id=f"{user}-{agent[:6]}-{start:%m%d%H%M}-{i}",
            user_agent=agent,
            usage=(100, 0, 10, 0),
            duration_ms=500,
        )
        for i in range(n)
    ]


# November 2026 in Seoul: weeks start on Mondays 2, 9, 16 (the 1st is a Sunday).
# OpenCode: alice from the 2nd, bob from the 10th; Claude Code: alice tries it on the
# 17th (Monday, 00:30 in Seoul: still the 16th in UTC), carol from the 18th.
ROWS = [
    *visit("alice", OPENCODE, dt.datetime(2026, 11, 2, 1, 0), n=3),
    *visit("alice", OPENCODE, dt.datetime(2026, 11, 4, 1, 0)),
    *visit("alice", OPENCODE, dt.datetime(2026, 11, 10, 1, 0)),
    *visit("bob", OPENCODE, dt.datetime(2026, 11, 10, 2, 0), n=2),
    *visit("bob", OPENCODE, dt.datetime(2026, 11, 11, 2, 0)),
    *visit("alice", CLAUDE, dt.datetime(2026, 11, 16, 15, 30)),
    *visit("carol", CLAUDE, dt.datetime(2026, 11, 18, 3, 0)),
    *visit("carol", CLAUDE, dt.datetime(2026, 11, 19, 3, 0)),
]
START = dt.datetime(2026, 10, 31, 15, 0, tzinfo=dt.UTC)  # 1 November, midnight in Seoul
NOVEMBER = Filters(start=START, end=dt.datetime(2026, 11, 30, 15, 0, tzinfo=dt.UTC), tz=SEOUL)


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> StoreReader:
    store = tmp_path_factory.mktemp("adoption") / "store"
    ingest_rows(Config(store=store), ROWS)
    return StoreReader(store, zone=SEOUL)


def active(frame: pd.DataFrame, period: str) -> dict[tuple[str, str], int]:
    rows = frame[frame["period"] == period]
    return {
        (str(start)[:10], str(client)): int(users)
        for start, client, users in zip(
            rows["period_start"], rows["client"], rows["active_users"], strict=True
        )
    }


def test_active_users_per_client_per_day_week_and_month(reader: StoreReader) -> None:
    adoption = reader.run("client_adoption", NOVEMBER)
    assert active(adoption, "week") == {
        ("2026-11-02", "OpenCode"): 1,  # alice three times on the 2nd and once on the 4th: one person
        ("2026-11-09", "OpenCode"): 2,
        ("2026-11-16", "Claude Code"): 2,  # alice's first try at 00:30 on the 17th in Seoul
    }
    assert active(adoption, "month") == {("2026-11-01", "OpenCode"): 2, ("2026-11-01", "Claude Code"): 2}
    assert active(adoption, "day") == {
        ("2026-11-02", "OpenCode"): 1,
        ("2026-11-04", "OpenCode"): 1,
        ("2026-11-10", "OpenCode"): 2,
        ("2026-11-11", "OpenCode"): 1,
        ("2026-11-17", "Claude Code"): 1,
        ("2026-11-18", "Claude Code"): 1,
        ("2026-11-19", "Claude Code"): 1,
    }
    assert adoption["whole"].all()
    # a range from Wednesday the 4th: the week of the 2nd is counted in part, and says so
    part = reader.run(
        "client_adoption", Filters(start=START + dt.timedelta(days=3), end=NOVEMBER.end, tz=SEOUL)
    )
    week = part[part["period"] == "week"].set_index("period_start")["whole"]
    assert not week[pd.Timestamp("2026-11-02")] and week[pd.Timestamp("2026-11-09")]


def test_first_use_of_each_client_over_everything_in_scope(reader: StoreReader) -> None:
    first = reader.run("client_first_use", Filters(start=START, end=START + dt.timedelta(days=1), tz=SEOUL))
    got = {
        (str(client), str(user)): (pd.Timestamp(when).to_pydatetime(), int(n))
        for client, user, when, n in zip(
            first["client"], first["user"], first["first_used"], first["requests"], strict=True
        )
    }
    utc = dt.UTC
    assert got == {
        ("OpenCode", "alice"): (dt.datetime(2026, 11, 2, 1, 0, tzinfo=utc), 5),
        ("OpenCode", "bob"): (dt.datetime(2026, 11, 10, 2, 0, tzinfo=utc), 3),
        ("Claude Code", "alice"): (dt.datetime(2026, 11, 16, 15, 30, tzinfo=utc), 1),
        ("Claude Code", "carol"): (dt.datetime(2026, 11, 18, 3, 0, tzinfo=utc), 2),
    }
    assert list(first["user"]) == ["alice", "bob", "alice", "carol"]  # in order of first use


def test_a_student_sees_only_their_own_adoption(reader: StoreReader) -> None:
    alice = ScopedReader(reader, (known_store.key_of("alice"),))
    assert active(alice.run("client_adoption", NOVEMBER), "month") == {
        ("2026-11-01", "OpenCode"): 1,
        ("2026-11-01", "Claude Code"): 1,
    }
    assert set(alice.run("client_first_use", NOVEMBER)["user"]) == {"alice"}


@pytest.mark.parametrize("period", ["day", "week", "month"])
def test_the_chart_is_valid_plotly_and_marks_the_periods_counted_in_part(
    reader: StoreReader, period: str
) -> None:
    part = reader.run(
        "client_adoption", Filters(start=START + dt.timedelta(days=3), end=NOVEMBER.end, tz=SEOUL)
    )
    figure = figures.active_users(part, period)
    checked = go.Figure(figure.to_dict())  # Plotly validates every property here
    names = [trace.name for trace in checked.data]
    assert set(names) == {"OpenCode", "Claude Code"}
    pale = {o for trace in checked.data for o in trace.marker.opacity}
    assert (min(pale) < 1) == (period in ("week", "month"))  # the week of the 2nd, November
    # a client keeps its colour whatever the period (ties are ordered by name)
    colours = {trace.name: trace.marker.color for trace in checked.data}
    assert colours == {
        trace.name: trace.marker.color
        for trace in go.Figure(figures.active_users(part, "month").to_dict()).data
    }


def test_the_overview_shows_adoption_when_asked(reader: StoreReader, monkeypatch: pytest.MonkeyPatch) -> None:
    at = test_pages.open_page(
        reader.store, monkeypatch, "Overview", range="custom", **{"from": "2026-11-01", "to": "2026-11-30"}
    )
    charts = len(at.get("plotly_chart"))
    at.toggle(key="adoption_show").set_value(True).run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == charts + 1
    first_use = at.dataframe[-1].value
    assert list(first_use["user"]) == ["alice", "bob", "alice", "carol"]
