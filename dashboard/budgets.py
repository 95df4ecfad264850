"""The administrator's budget table: every key's spend against its budget, limits and
last activity, the keys closest to (or over) their budget first."""

from __future__ import annotations

import streamlit as st

from dashboard import format as fmt
from dashboard import panels, tables
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
LIMITS = ("key_alias", "user_id", "budget_reset_at", "tpm_limit", "rpm_limit", "blocked", "expires")
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
    table = budgets.assign(
        level=[t(f"budget.level.{level}") for level in levels],
        budget_reset_at=budgets["budget_reset_at"].dt.tz_convert(tz),
        last_active=budgets["last_active"].dt.tz_convert(tz),
        expires=budgets["expires"].dt.tz_convert(tz),
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
        "budget_reset_at": st.column_config.DatetimeColumn(t("budgets.resets")),
        "tpm_limit": st.column_config.NumberColumn(t("col.tpm")),
        "rpm_limit": st.column_config.NumberColumn(t("col.rpm")),
        "last_active": st.column_config.DatetimeColumn(t("budgets.last_active")),
        "blocked": st.column_config.CheckboxColumn(t("budgets.blocked")),
        "expires": st.column_config.DatetimeColumn(t("budgets.expires")),
    }
    formats = {
        **dict.fromkeys(("spend", "max_budget", "budget_left"), fmt.usd),
        **dict.fromkeys(("tpm_limit", "rpm_limit"), fmt.count),
        **dict.fromkeys(("budget_reset_at", "last_active"), tables.when(tz)),
        "expires": tables.day(tz),
    }
    # the level in the colour of the same scale a student's own bars use (format.LEVEL_COLORS)
    colours = [f"color: {fmt.LEVEL_HEX[level]}; font-weight: 600" for level in levels]
    shown = table[list(columns)].assign(budget_used=tables.percent_bar(table["budget_used"]))
    standing, limits = list(STANDING), list(LIMITS)
    tables.show(
        tables.styled(shown[standing], formats).apply(lambda _: colours, subset=["level"]),
        {name: columns[name] for name in standing},
    )
    tables.show(tables.styled(shown[limits], formats), {name: columns[name] for name in limits})
    st.caption(t("budgets.note", tz=tz))
