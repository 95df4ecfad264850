"""The administrator's overview, top to bottom: filters, freshness, the answers at a
glance (dashboard/glance.py), cards, the cost at API prices (with a price book), tokens
and caching, requests and nodes, users and clients, models, download."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import streamlit as st

from dashboard import api_cost, glance, panels
from dashboard.strings import t
from dashboard.view_state import ViewState
from queries import pages
from queries.runner import Reader
from settings.config import Config

DOWNLOADS = (
    ("by_user", "download.users"),
    ("by_bucket", "download.series"),
    ("by_node", "download.nodes"),
    ("user_client_matrix", "download.clients"),
    ("by_model", "download.models"),
)


def render(config: Config, reader: Reader, state: ViewState, links: Mapping[str, Any] | None = None) -> None:
    """The page; `links`: the other pages by name, for the glance block's links."""
    st.header(t("page.overview"))
    status = panels.store_status(reader)
    if status is None:
        return
    now = dt.datetime.now(dt.UTC)
    with panels.computing(state, now):
        page = panels.load(reader, state, now, config.dashboard, ahead=panels.PREFETCH_USERS)
        costs = pages.api_cost(reader, page.filters, top_names=config.dashboard.top_names)
        answers = pages.glance(reader, page.filters) | ({"api_cost_totals": costs["totals"]} if costs else {})
        window = pages.verdict_window(reader.resolve(page.filters))
    panels.freshness(status, config, state.tz, reader)
    glance.render(glance.build(page.data, answers, state.tz, window), links or {})
    panels.cards(page)
    api_cost.panel(costs, state.tz)
    panels.time_charts(page)
    left, right = st.columns([1, 1])
    with left, st.container(border=True):
        panels.users_panel(config, page)
    with right, st.container(border=True):
        panels.clients_panel(page, matrix=True)
    panels.models_panel(page)
    panels.adoption_panel(reader, page.filters, state.tz)
    panels.downloads(page, DOWNLOADS)
