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
from dashboard import limits as rate_limits
from dashboard.strings import current_language, t
from queries import pages
from queries.runner import Reader
from settings.config import Config

# All the columns are 1,160 px or more (Korean dates are longer), wider than the page on a
# 1280 or 1440 px screen: the frame's edge cut a value in half. So tables one under the
# other, each fitting 818 px (the page's width at 1280 px), the first two in the same row
# order: where each key stands against its budget, then its pace and dates.
# The status, the share used and the forecast side by side (issue 28), with the requests
# LiteLLM refused the key for its budget in the week (BudgetExceededError).
STANDING = (
    "level",
    "key_alias",
    "user_id",
    "spend",
    "max_budget",
    "budget_used",
    "forecast",
    "budget_refused",
)
# the pace of the last 7 days and the dates (forecasts.py); what is left is the budget less
# the spend beside it (a ninth column made the table wider than the page at 1280 px)
PACE = (
    "key_alias",
    "user_id",
    "burn_per_day",
    "runs_out_at",
    "budget_reset_at",  # not its period ("30d"): that column made the table too wide at 1280 px
    "last_active",
    "blocked",
    "expires",
)
# the keys with a TPM or RPM limit, nearest their limits first (queries/key_limits.sql)
LIMITS = (
    "key_alias",
    "user_id",
    "tpm_limit",
    "peak_tokens",
    "rpm_limit",
    "peak_requests",
    "rate_limited",
    "last_rate_limited_at",
)
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
    refused = pages.budget_refusals(reader).set_index("api_key_hash")["budget_refused"]
    budgets = budgets.assign(budget_refused=budgets["api_key_hash"].map(refused).fillna(0).astype("int64"))
    levels = forecasts.levels(budgets)
    over, near = levels.count("over"), levels.count("near")
    st.markdown(t("budgets.summary", keys=len(budgets), over=over, near=near))
    unreadable = forecasts.unreadable(budgets)
    if unreadable:
        st.caption(unreadable)
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
        # a budget that cannot be read (inf, NaN, negative) is named above, not shown as a number
        max_budget=budgets["max_budget"].where(
            budgets["budget_used"].notna() | budgets["budget_problem"].isna()
        ),
        **{name: budgets[name].dt.tz_convert(tz) for name in times},
    )
    columns = {
        "level": st.column_config.TextColumn(t("budgets.level")),
        "key_alias": st.column_config.TextColumn(t("budgets.key")),
        "user_id": st.column_config.TextColumn(t("budgets.user")),
        "spend": st.column_config.NumberColumn(t("budgets.spend")),
        "max_budget": st.column_config.NumberColumn(t("budgets.budget")),
        "budget_used": st.column_config.ProgressColumn(
            t("budgets.used"),
            min_value=0.0,
            max_value=100.0,
            format=t("colfmt.percent"),
            width=USED_PX,
            # one colour for every row (Streamlit colours a column, not a cell): the level
            # column says how close each key is, in the students' colours; red on every
            # bar said "over" of a key at 20 %
            color="gray",
        ),
        "budget_left": st.column_config.NumberColumn(t("budgets.left")),
        "burn_per_day": st.column_config.NumberColumn(t("budgets.pace")),
        "forecast": st.column_config.TextColumn(t("budgets.forecast")),
        # wide enough for a time to the minute: glide sized them by their header, and
        # "2026-12-15 21:0" lost its last digit at 1280 and 1440 px
        "runs_out_at": st.column_config.DatetimeColumn(t("budgets.runs_out"), width=_minute_px()),
        "budget_reset_at": st.column_config.DatetimeColumn(t("budgets.resets"), width=_minute_px()),
        "budget_duration": st.column_config.TextColumn(t("budgets.every")),
        "tpm_limit": st.column_config.NumberColumn(t("col.tpm")),
        "rpm_limit": st.column_config.NumberColumn(t("col.rpm")),
        "last_active": st.column_config.DatetimeColumn(t("budgets.last_active"), width=_day_px()),
        "peak_tokens": st.column_config.TextColumn(t("limits.peak_tokens")),
        "peak_requests": st.column_config.TextColumn(t("limits.peak_requests")),
        "rate_limited": st.column_config.NumberColumn(t("limits.refused_col")),
        "budget_refused": st.column_config.NumberColumn(t("budgets.refused"), help=t("budgets.refused_help")),
        "last_rate_limited_at": st.column_config.DatetimeColumn(t("limits.last_refused")),
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
        **dict.fromkeys(("tpm_limit", "rpm_limit", "rate_limited", "budget_refused"), fmt.count),
        **dict.fromkeys((*times, "last_rate_limited_at"), tables.when(tz)),
        "expires": tables.day(tz),  # a day, not a time: after the times above
        "last_active": tables.day(tz),  # which day is what a "who stopped using it" needs
    }
    # the level in the colour of the same scale a student's own bars use (format.LEVEL_COLORS)
    colours = [f"color: {fmt.LEVEL_HEX[level]}; font-weight: 600" for level in levels]
    _table(
        table, STANDING, columns, formats, lambda styler: styler.apply(lambda _: colours, subset=["level"])
    )
    st.caption(t("budgets.pace_note"))
    # a run-out after the reset never comes (the reset comes first): no date, as the
    # forecast beside it says it lasts
    comes = table["budget_reset_at"].isna() | (table["runs_out_at"] < table["budget_reset_at"])
    _table(table.assign(runs_out_at=table["runs_out_at"].where(comes)), PACE, columns, formats)
    limits = pages.limits(reader)
    if not limits.empty:
        st.markdown(f"**{t('limits.title')}**")
        limited = limits.assign(
            peak_tokens=[
                rate_limits.peak(v, s) for v, s in zip(limits["peak_tpm"], limits["tpm_share"], strict=True)
            ],
            peak_requests=[
                rate_limits.peak(v, s) for v, s in zip(limits["peak_rpm"], limits["rpm_share"], strict=True)
            ],
            last_rate_limited_at=limits["last_rate_limited_at"].dt.tz_convert(tz),
        )
        _table(limited, LIMITS, columns, formats)
        st.caption(t("limits.note"))
    persons = table[table["user_max_budget"].notna()].drop_duplicates("user_id")
    if not persons.empty:
        st.markdown(f"**{t('budgets.people')}**")
        _table(persons.sort_values("user_runs_out_at", na_position="last"), tuple(people), people, formats)
    st.caption(t("budgets.note", tz=tz))


def _minute_px() -> int:
    """A column's width for a time to the minute in the page's language (Korean's are longer)."""
    return 160 if current_language() == "ko" else 124


def _day_px() -> int:
    return 118 if current_language() == "ko" else 88


def _table(
    table: pd.DataFrame,
    names: tuple[str, ...],
    columns: dict[str, Any],
    formats: dict[str, tables.Formatter],
    style: Callable[[Styler], Styler] = lambda styler: styler,
) -> None:
    tables.show(style(tables.styled(table[list(names)], formats)), {name: columns[name] for name in names})
