"""The administrator's budget table: every key's spend against its budget, limits and
last activity, the keys closest to (or over) their budget first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from dashboard import forecasts, panels, tables
from dashboard import format as fmt
from dashboard.strings import t
from etl.config import Config
from queries import pages
from queries.runner import Reader

# Thirteen columns are 1,160 px or more (Korean dates are longer), wider than the page on a
# 1280 or 1440 px screen: the frame's edge cut a value in half. So two tables, one under the
# other, rows in the same order: where each key stands against its budget, then its limits
# and dates. Each fits 818 px, the page's width at 1280 px.
STANDING = (
    "level",
    "key_alias",
    "user_id",
    "spend",
    "max_budget",
    "budget_used",
    "budget_left",
    "last_active",
)
# whether each budget lasts until its reset at the pace of the last 7 days (forecasts.py)
PACE = (
    "key_alias",
    "user_id",
    "burn_per_day",
    "forecast",
    "runs_out_at",
    "budget_reset_at",
    "budget_duration",
)
LIMITS = ("key_alias", "user_id", "tpm_limit", "rpm_limit", "blocked", "expires")
# a person's own budget across their keys (LiteLLM's user budget), one row per person
PEOPLE = (
    "user_id",
    "user_spend",
    "user_max_budget",
    "user_burn_per_day",
    "user_forecast",
    "user_runs_out_at",
)
USED_PX = 110  # the bar and "117.2 %"; Streamlit's own 150 px left the first table 2 px too wide in Korean


def render(config: Config, reader: Reader, tz: str) -> None:
    """Every key against its budget, times written in `tz` (the view's zone)."""
    st.header(t("page.budgets"))
    status = panels.store_status(reader)
    if status is None:
        return
    panels.freshness(status, config, tz, reader)
    budgets = pages.budgets(reader)
    over = int((budgets["budget_used"] >= 1).sum())
    near = int(((budgets["budget_used"] >= fmt.BUDGET_NEAR) & (budgets["budget_used"] < 1)).sum())
    st.markdown(t("budgets.summary", keys=len(budgets), over=over, near=near))
    levels = [fmt.budget_level(used) for used in budgets["budget_used"]]
    times = (
        "budget_reset_at",
        "last_active",
        "expires",
        "runs_out_at",
        "user_runs_out_at",
        "user_budget_reset_at",
    )
    table = budgets.assign(
        level=[t(f"budget.level.{level}") for level in levels],
        forecast=[forecasts.status(f) for f in budgets["forecast"]],
        user_forecast=[forecasts.status(f) for f in budgets["user_forecast"]],
        budget_duration=[fmt.period(d) for d in budgets["budget_duration"]],
        budget_used=tables.percent_bar(budgets["budget_used"]),
        **{name: budgets[name].dt.tz_convert(tz) for name in times},
    )
    columns = {
        "level": st.column_config.TextColumn(t("budgets.level")),
        "key_alias": st.column_config.TextColumn(t("budgets.key")),
        "user_id": st.column_config.TextColumn(t("budgets.user")),
        "spend": st.column_config.NumberColumn(t("budgets.spend")),
        "max_budget": st.column_config.NumberColumn(t("budgets.budget")),
        "budget_used": st.column_config.ProgressColumn(
            t("budgets.used"), min_value=0.0, max_value=100.0, format=t("colfmt.percent"), width=USED_PX
        ),
        "budget_left": st.column_config.NumberColumn(t("budgets.left")),
        "burn_per_day": st.column_config.NumberColumn(t("budgets.pace")),
        "forecast": st.column_config.TextColumn(t("budgets.forecast")),
        "runs_out_at": st.column_config.DatetimeColumn(t("budgets.runs_out")),
        "budget_reset_at": st.column_config.DatetimeColumn(t("budgets.resets")),
        "budget_duration": st.column_config.TextColumn(t("budgets.every")),
        "tpm_limit": st.column_config.NumberColumn(t("col.tpm")),
        "rpm_limit": st.column_config.NumberColumn(t("col.rpm")),
        "last_active": st.column_config.DatetimeColumn(t("budgets.last_active")),
        "blocked": st.column_config.CheckboxColumn(t("budgets.blocked")),
        "expires": st.column_config.DatetimeColumn(t("budgets.expires")),
    }
    people = {
        "user_id": columns["user_id"],
        "user_spend": columns["spend"],
        "user_max_budget": columns["max_budget"],
        "user_burn_per_day": columns["burn_per_day"],
        "user_forecast": columns["forecast"],
        "user_runs_out_at": columns["runs_out_at"],
        "user_budget_reset_at": columns["budget_reset_at"],
    }
    money = ("spend", "max_budget", "budget_left", "burn_per_day", "user_spend", "user_max_budget")
    formats = {
        **dict.fromkeys((*money, "user_burn_per_day"), fmt.usd),
        **dict.fromkeys(("tpm_limit", "rpm_limit"), fmt.count),
        **dict.fromkeys((*times[:2], *times[3:]), tables.when(tz)),
        "expires": tables.day(tz),
    }
    # the level in the colour of the same scale a student's own bars use (format.LEVEL_COLORS)
    colours = [f"color: {fmt.LEVEL_HEX[level]}; font-weight: 600" for level in levels]
    _table(
        table, STANDING, columns, formats, lambda styler: styler.apply(lambda _: colours, subset=["level"])
    )
    st.caption(t("budgets.pace_note"))
    _table(table, PACE, columns, formats)
    _table(table, LIMITS, columns, formats)
    persons = table[table["user_max_budget"].notna()].drop_duplicates("user_id")
    if not persons.empty:
        st.markdown(f"**{t('budgets.people')}**")
        _table(persons.sort_values("user_runs_out_at", na_position="last"), tuple(people), people, formats)
    st.caption(t("budgets.note", tz=tz))


def _table(
    table: pd.DataFrame,
    names: tuple[str, ...],
    columns: dict[str, Any],
    formats: dict[str, tables.Formatter],
    style: Callable[[Styler], Styler] = lambda styler: styler,
) -> None:
    tables.show(style(tables.styled(table[list(names)], formats)), {name: columns[name] for name in names})
