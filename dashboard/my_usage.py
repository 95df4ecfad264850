"""A student's page: their own cards, tokens, caching, requests, budget and limits,
clients and models, and (as the lab allows) where they stand among everyone."""

from __future__ import annotations

import datetime as dt

import streamlit as st

from dashboard import api_cost, panels
from dashboard.strings import t
from dashboard.view_state import ViewState
from queries import pages
from queries.scope import ScopedReader
from settings.config import Config

DOWNLOADS = (("by_bucket", "download.series"), ("by_model", "download.models"))


def render(config: Config, reader: ScopedReader, state: ViewState) -> None:
    st.header(t("page.my_usage"))
    status = reader.run("store_status").iloc[0]
    panels.freshness(status, config, state.tz, reader, reasons=False)
    with st.container(border=True):
        panels.budget_bars(pages.budgets(reader), pages.limits(reader), state.tz)
    if int(status["requests"]) == 0:  # a new key: its budget, and no charts of nothing
        st.info(t("student.no_requests"))
        return
    now = dt.datetime.now(dt.UTC)
    with panels.computing(state, now):
        page = panels.load(reader, state, now, config.dashboard)
        costs = pages.api_cost(reader, page.filters, top_names=config.dashboard.top_names)
    panels.cards(page)
    api_cost.panel(costs, state.tz, student=True)
    panels.time_charts(page)
    left, right = st.columns([1, 1])
    with left, st.container(border=True):
        panels.clients_panel(page, matrix=False)
    with right, st.container(border=True):
        if config.dashboard.peers == "hidden":
            st.caption(t("panel.peers.hidden"))
        else:
            panels.peers_panel(config, reader, page)
    panels.models_panel(page)
    panels.adoption_panel(reader, page.filters, state.tz)
    panels.downloads(page, DOWNLOADS)
