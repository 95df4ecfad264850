"""What a page shows, loaded: its result sets and the highlighted user's part of them
(Page, load); the highlight's queries, for a click now or computed ahead for the users
at the top of their bars (PREFETCH_USERS); and the line saying what the page computes."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import tables
from dashboard.strings import t
from dashboard.view_state import ViewState
from queries.filters import Filters
from queries.pages import NAMED, WITH_HIGHLIGHT, overview, overview_jobs
from queries.runner import Job, Reader
from settings.config import DashboardSettings

HIGHLIGHT_QUERIES = ("totals", "by_bucket", "by_node", "by_client", "by_model")
# the users (from the top of their bars) whose highlighted parts the Overview computes
# ahead, on one background thread, for a click on their bar: 0.28 s each at 1M requests
# (2.2 s for eight), shared by every session; about what the first screen shows of them
PREFETCH_USERS = 8


@dataclass(frozen=True)
class Page:
    """What one run of a page shows."""

    state: ViewState
    filters: Filters
    data: dict[str, pd.DataFrame]
    mine: dict[str, pd.DataFrame]  # the highlighted user's part; empty without highlight


def load(
    reader: Reader,
    state: ViewState,
    now: dt.datetime,
    settings: DashboardSettings | None = None,
    *,
    ahead: int = 0,
) -> Page:
    """The page's result sets, each breakdown's folded names named ("other 99,980"); the
    highlighted user's part of each breakdown is folded as the whole page's is. `ahead`:
    how many users, from the top of their bars, to compute the highlighted parts of in the
    background (a page with the users' bars: PREFETCH_USERS)."""
    settings = settings or DashboardSettings()
    filters = state.filters(now)
    top, grid = settings.top_names, settings.grid_names
    # a click highlights a user on the bars: the page's own result sets already hold them,
    # and those kept for the highlight are the same (asked again, 0.1 s a click at 1M)
    found = overview(reader, filters, top_names=top, grid_names=grid)
    if state.highlight is not None and not shown(found, state.highlight):
        found = overview(reader, filters, top_names=top, grid_names=grid, highlight=state.highlight)
    data = {
        key: tables.with_other(frame, NAMED[key]) if key in NAMED else frame for key, frame in found.items()
    }
    data["user_client_matrix"] = tables.with_other(
        tables.with_other(data["user_client_matrix"], "user", "users_folded"), "client", "clients_folded"
    )
    mine: dict[str, pd.DataFrame] = {}
    if state.highlight is not None:
        theirs = reader.run_many(highlight_jobs(found, filters, state.highlight, settings))
        mine = {
            name: tables.with_other(frame, NAMED[name], label=tables.other_label(data[name], NAMED[name]))
            if name in NAMED
            else frame
            for name, frame in theirs.items()
        }
    if ahead:  # the next click is often on a user's bar: computed while the person reads
        users = found["by_user"].loc[found["by_user"]["folded"].isna(), "user"].tolist()
        others = [who for who in users[:ahead] if who != state.highlight]
        reader.prefetch(highlighting_jobs(reader.resolve(filters), found, others, settings))
    return Page(state=state, filters=filters, data=data, mine=mine)


def highlighting_jobs(
    filters: Filters, found: Mapping[str, pd.DataFrame], users: list[str], settings: DashboardSettings
) -> dict[str, Job]:
    """What a click highlighting each of `users` asks for: the page's result sets that
    keep the highlighted user, and their part of the page; user by user."""
    asked: dict[str, Job] = {}
    for who in users:
        page = overview_jobs(filters, settings.top_names, settings.grid_names, who)
        kept = {} if shown(found, who) else {name: page[name] for name in WITH_HIGHLIGHT}
        jobs = kept | highlight_jobs(found, filters, who, settings)
        asked |= {f"{name} of {who}": job for name, job in jobs.items()}
    return asked


def shown(found: Mapping[str, pd.DataFrame], who: str) -> bool:
    """Whether `who` has rows of their own in the result sets that keep a highlighted user
    whatever their rank (WITH_HIGHLIGHT): then those are the same with `who` highlighted."""
    users, grid = found["by_user"], found["user_client_matrix"]
    return bool(
        (users["user"].eq(who) & users["folded"].isna()).any()
        and (grid["user"].eq(who) & grid["users_folded"].isna()).any()
    )


def highlight_jobs(
    found: Mapping[str, pd.DataFrame], filters: Filters, who: str, settings: DashboardSettings
) -> dict[str, Job]:
    """The queries of `who`'s part of the page whose result sets are `found` (each
    breakdown over the names the page shows, no others)."""
    theirs = replace(filters, users=(who,))
    jobs: dict[str, Job] = {}
    for name in HIGHLIGHT_QUERIES:
        if name in NAMED:
            shown = found[name].loc[found[name]["folded"].isna(), NAMED[name]].tolist()
            jobs[name] = (name, theirs, {"top_names": settings.top_names, "shown": shown})
        else:
            jobs[name] = (name, theirs)
    return jobs


def computing(state: ViewState, now: dt.datetime) -> Any:
    """A line saying what the page computes, shown only when that takes over half a second
    (Streamlit's spinner waits that long): a range's first view after a restart or a new
    ETL run, a year-long range. Fast runs show nothing."""
    filters = state.filters(now)
    days = 1
    if filters.start is not None and filters.end is not None:
        days = max(1, math.ceil((filters.end - filters.start).total_seconds() / 86400))
    return st.spinner(t("progress.computing", days=days), show_time=True)
