"""What sessions share: query results and figures are computed once for everyone, never
served from an older store, and nobody's change to their copy reaches anyone else."""

from __future__ import annotations

import datetime as dt
import functools
import threading
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from dashboard import figures, memo, panels
from dashboard.strings import use_language
from dashboard.view_state import ViewState
from etl.run import ingest_rows
from queries import snapshot
from queries.filters import Filters
from queries.pages import WITH_HIGHLIGHT, overview
from queries.results import PREFETCH_QUIET_S
from queries.runner import StoreReader
from queries.shared import Shared
from settings.config import Config, DashboardSettings
from tests import known_store


def test_a_value_asked_for_at_once_is_computed_once() -> None:
    cache: Shared[int] = Shared(max_entries=10)
    calls = []

    def slow() -> int:
        calls.append(1)
        time.sleep(0.2)
        return 42

    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(cache.get("k", slow))) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [42] * 20 and len(calls) == 1
    assert (cache.hits + cache.misses, cache.misses) == (20, 1)


def test_a_failure_is_not_kept() -> None:
    cache: Shared[int] = Shared(max_entries=10)

    def broken() -> int:
        raise RuntimeError("database gone")

    with pytest.raises(RuntimeError):
        cache.get("k", broken)
    assert cache.get("k", lambda: 7) == 7


def test_least_recently_used_goes_first_within_the_bounds() -> None:
    cache: Shared[str] = Shared(max_entries=100, max_size=40, size=len)
    for key in "abcd":
        cache.get(key, functools.partial(str.__mul__, key, 10))  # 10 each: all four fit
    cache.get("a", lambda: "never")  # a is used again
    cache.get("e", lambda: "e" * 10)  # 50 > 40: the least recently used (b) goes
    assert cache.get("b", lambda: "recomputed") == "recomputed"
    assert cache.get("a", lambda: "never") == "a" * 10
    assert cache.get("huge", lambda: "x" * 11) == "x" * 11  # over a quarter: served, not kept
    assert cache.get("huge", lambda: "again") == "again"


def test_sessions_share_results_but_not_their_copies(tmp_path: Path) -> None:
    reader = StoreReader(known_store.build(tmp_path / "store"))
    filters = Filters(tz="UTC")
    first = reader.run("by_user", filters)
    first["spend_usd"] = 0.0  # one page changing its frame
    first.loc[0, "user"] = "mallory"
    again = reader.run("by_user", filters)
    assert "mallory" not in set(again["user"]) and again["spend_usd"].sum() > 0
    assert reader._results.hits >= 1


def test_a_new_store_is_never_answered_from_the_old_results(tmp_path: Path) -> None:
    store = known_store.build(tmp_path / "store")
    reader = StoreReader(store)
    before = int(reader.run("totals", Filters(tz="UTC")).iloc[0]["requests"])
    extra = [r | {"request_id": f"late-{i}"} for i, r in enumerate(known_store.ROWS[:3])]
    ingest_rows(Config(store=store, nodes=known_store.NODES), extra)
    deadline = time.monotonic() + 30
    while int(reader.run("totals", Filters(tz="UTC")).iloc[0]["requests"]) == before:
        assert time.monotonic() < deadline, "the new store was never read"
        time.sleep(0.2)
    assert int(reader.run("totals", Filters(tz="UTC")).iloc[0]["requests"]) == before + 3


def test_a_figure_is_built_once_per_data_highlight_and_language(tmp_path: Path) -> None:
    reader = StoreReader(known_store.build(tmp_path / "store"))
    users = reader.run("by_user", Filters(tz="UTC"))
    one = figures.user_bars(users, "spend", None)
    again = reader.run("by_user", Filters(tz="UTC"))  # another session's copy of the result
    assert again is not users
    assert figures.user_bars(again, "spend", None) is one  # equal data, same figure
    assert figures.user_bars(users, "spend", users["user"].iloc[0]) is not one  # the highlight matters
    changed = users.assign(spend_usd=users["spend_usd"] * 2)
    assert figures.user_bars(changed, "spend", None) is not one  # so does the data
    with use_language("ko"):
        korean = figures.user_bars(users, "spend", None)
    assert korean is not one


def test_unhashable_arguments_are_built_each_time() -> None:
    calls = []

    @memo.shared
    def builder(value: object) -> int:
        calls.append(value)
        return len(calls)

    assert builder({1, 2}) != builder({1, 2})  # a set has no fingerprint: no sharing
    assert builder(("a", 1)) == builder(("a", 1))


def test_students_never_get_each_others_shared_results(tmp_path: Path) -> None:
    """The same page, the same filters, asked by two students one after the other: the
    second must not be served the first one's result."""
    from dashboard.auth import key_hash
    from queries.scope import ScopedReader

    reader = StoreReader(known_store.build(tmp_path / "store"))
    filters = Filters(tz="UTC")
    seen = {}
    for name in ("alice", "bob", "alice"):
        scoped = ScopedReader(reader, (str(key_hash(f"sk-{name}")),))
        seen[name] = set(scoped.run("by_user", filters)["user"])
    assert seen == {"alice": {"alice"}, "bob": {"bob"}}
    assert reader._results.hits >= 1  # the second alice was shared


def test_a_new_store_is_warmed_with_what_sessions_asked_for(tmp_path: Path) -> None:
    """The ETL changes the store every few minutes: the pages people were looking at are
    answered on the new snapshot before it serves, so nobody waits for them after."""
    store = known_store.build(tmp_path / "store")
    reader = StoreReader(store)
    seven_days = Filters(tz="Asia/Seoul")
    before = {name: reader.run(name, seven_days) for name in ("totals", "by_user", "by_node")}
    extra = [r | {"request_id": f"late-{i}"} for i, r in enumerate(known_store.ROWS[:3])]
    ingest_rows(Config(store=store, nodes=known_store.NODES), extra)
    deadline = time.monotonic() + 30
    while reader.version() != snapshot.version(store):  # what a page's first query notices
        reader.run("store_status")
        assert time.monotonic() < deadline, "the new store was never read"
        time.sleep(0.2)
    misses = reader._results.misses
    after = {name: reader.run(name, seven_days) for name in before}
    assert reader._results.misses == misses  # all three were ready on the new snapshot
    assert int(after["totals"].iloc[0]["requests"]) == int(before["totals"].iloc[0]["requests"]) + 3


def test_a_page_computes_its_users_highlights_ahead_as_a_click_would(tmp_path: Path) -> None:
    """The Overview computes the highlighted parts of the users its bars show on one
    background thread; a click on a bar then computes nothing, and shows what a reader
    that shares nothing computes."""
    store = known_store.build(tmp_path / "store")
    reader = StoreReader(store)
    now = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)
    state = ViewState(range="custom", start_day=dt.date(2026, 11, 19), end_day=dt.date(2026, 11, 21))
    page = panels.load(reader, state, now, ahead=panels.PREFETCH_USERS)
    users = page.data["by_user"].loc[page.data["by_user"]["folded"].isna(), "user"].tolist()
    assert len(users) >= 2
    deadline = time.monotonic() + 30
    while reader._prefetching and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not reader._prefetching
    # asked ahead is not asked for: a new store does not answer it again before it serves
    asked = [filters.users for _, filters, _ in reader._recent.values()]
    assert not any(users_ == (who,) for users_ in asked for who in users)
    misses = reader._results.misses
    fresh = StoreReader(store, share_results=False)
    for who in users:
        mine = panels.load(reader, replace(state, highlight=who), now).mine
        assert set(mine) == set(panels.HIGHLIGHT_QUERIES)
        expected = panels.load(fresh, replace(state, highlight=who), now).mine
        for name, frame in mine.items():
            pd.testing.assert_frame_equal(frame, expected[name])
    assert reader._results.misses == misses  # every click answered from what was computed ahead
    # asked ahead is not asked for: a new store does not answer it again before it serves


def test_a_highlight_asks_again_only_for_a_user_the_bars_folded(tmp_path: Path) -> None:
    """A click highlights a user the bars show: the page's result sets already hold them
    and are not asked for again. A user folded into "other" (a link, a reload) gets the
    result sets that keep them. Both show who asking with the highlight shows."""
    store = known_store.build(tmp_path / "store")
    reader = StoreReader(store)
    now = dt.datetime(2026, 11, 22, tzinfo=dt.UTC)
    state = ViewState(range="custom", start_day=dt.date(2026, 11, 19), end_day=dt.date(2026, 11, 21))
    settings = DashboardSettings(top_names=1, grid_names=1)

    def named(frame: pd.DataFrame, folded: str) -> set[str]:
        return set(frame.loc[frame[folded].isna(), "user"])

    everyone = named(
        panels.load(reader, state, now, DashboardSettings(top_names=50)).data["by_user"], "folded"
    )
    first = named(panels.load(reader, state, now, settings).data["by_user"], "folded")
    assert len(first) == 1 and len(everyone) > 1
    fresh = StoreReader(store, share_results=False)
    for who, asked_again in ((min(first), False), (min(everyone - first), True)):
        misses = reader._results.misses
        page = panels.load(reader, replace(state, highlight=who), now, settings)
        kept = reader._results.misses - misses - len(panels.HIGHLIGHT_QUERIES)  # the rest: their part
        assert kept == (len(WITH_HIGHLIGHT) if asked_again else 0), who
        expected = overview(fresh, state.filters(now), top_names=1, grid_names=1, highlight=who)
        assert named(page.data["by_user"], "folded") == named(expected["by_user"], "folded") >= {who}
        grid = page.data["user_client_matrix"]
        assert named(grid, "users_folded") == named(expected["user_client_matrix"], "users_folded") >= {who}


def test_what_is_asked_ahead_waits_until_no_page_asks(tmp_path: Path) -> None:
    """A batch asked ahead is computed while people read, not beside their clicks: while
    pages keep asking (even for what is shared already), it waits; then it is computed."""
    reader = StoreReader(known_store.build(tmp_path / "store"))
    week = Filters(tz="Asia/Seoul")
    reader.run("totals", week)
    misses = reader._results.misses
    reader.prefetch({"ahead": ("by_model", week)})
    until = time.monotonic() + PREFETCH_QUIET_S + 1.5
    while time.monotonic() < until:  # a page asking every tenth of a second
        reader.run("totals", week)
        assert reader._results.misses == misses  # answered from what is shared; nothing ahead
        time.sleep(0.1)
    deadline = time.monotonic() + 30
    while reader._prefetching and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not reader._prefetching
    assert reader._results.misses == misses + 1  # computed once the pages were quiet
    reader.run("by_model", week)
    assert reader._results.misses == misses + 1  # and then shared
