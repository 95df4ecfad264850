"""Adoption by client, on demand below the breakdowns: each client's active users per day,
week or month, and when each person first used each client (what the lab watches when it
introduces a coding agent). A student's reader is scoped: they see their own."""

from __future__ import annotations

import streamlit as st

from dashboard import figures, tables
from dashboard import format as fmt
from dashboard.figures.adoption import PERIODS
from dashboard.panels.plot import plot
from dashboard.strings import plain, t
from queries import pages
from queries.filters import Filters
from queries.runner import Reader


@st.fragment
def adoption_panel(reader: Reader, filters: Filters, tz: str) -> None:
    """Off until asked for (its queries read the range's single requests): a switch
    reruns this panel alone."""
    with st.container(border=True):
        if not st.toggle(t("adoption.show"), key="adoption_show", help=t("adoption.help")):
            return
        period = (
            st.segmented_control(
                t("adoption.period"),
                PERIODS,
                format_func=lambda p: plain(f"adoption.{p}"),
                default="week",
                key="adoption_period",
            )
            or "week"
        )
        data = pages.adoption(reader, filters)
        plot(figures.active_users(data["client_adoption"], period), key="adoption_chart")
        first = data["client_first_use"]
        if first.empty:
            return
        st.markdown(f"**{t('adoption.first_use')}**")
        columns = {
            "client": st.column_config.TextColumn(plain("adoption.col.client")),
            "user": st.column_config.TextColumn(plain("adoption.col.user")),
            "first_used": st.column_config.Column(plain("adoption.col.first_used")),
            "requests": st.column_config.Column(plain("adoption.col.requests")),
        }
        formats = {"first_used": tables.when(tz), "requests": fmt.count}
        tables.show(tables.styled(first[list(columns)], formats), columns)
