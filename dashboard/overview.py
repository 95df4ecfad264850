"""The administrator's overview, top to bottom: filters, freshness, cards, the cost at API
prices (with a price book), tokens and caching, requests and nodes, users and clients,
models, download."""

from __future__ import annotations

import datetime as dt

import streamlit as st

from dashboard import api_cost, panels
from dashboard.strings import t
from dashboard.view_state import ViewState
from etl.config import Config
from queries import pages
from queries.runner import Reader

DOWNLOADS = (
    ("by_user", "download.users"),
    ("by_bucket", "download.series"),
    ("by_node", "download.nodes"),
    ("user_client_matrix", "download.clients"),
    ("by_model", "download.models"),
)


def render(config: Config, reader: Reader, state: ViewState) -> None:
    st.header(t("page.overview"))
    status = panels.store_status(reader)
    if status is None:
        return
    page = panels.load(reader, state, dt.datetime.now(dt.UTC), config.dashboard)
    panels.freshness(status, config, state.tz, reader)
    panels.cards(page)
    api_cost.panel(pages.api_cost(reader, page.filters, top_names=config.dashboard.top_names), state.tz)
    panels.time_charts(page)
    left, right = st.columns([1, 1])
    with left, st.container(border=True):
        panels.users_panel(config, page)
    with right, st.container(border=True):
        panels.clients_panel(page, matrix=True)
    panels.models_panel(page)
    panels.downloads(page, DOWNLOADS)
