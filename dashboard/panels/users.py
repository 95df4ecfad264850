"""The users' bars and the highlight: a click on a user's bar highlights them on the whole
page, the note that clears it, the measure the bars are drawn by, and a student's peers."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import figures
from dashboard import format as fmt
from dashboard.panels.loading import Page
from dashboard.panels.plot import plot
from dashboard.panels.sidebar import WIDGETS, _keep_view, _labels
from dashboard.strings import plain, t
from dashboard.view_state import USER_MEASURES, ViewState
from settings.config import Config


def users_panel(config: Config, page: Page) -> None:
    st.markdown(f"**{t('panel.users')}**", help=t("panel.users.hint"))
    _users_chart(config, page)


@st.fragment
def _users_chart(config: Config, page: Page) -> None:
    """The users' bars rerun alone when their measure is switched (nothing else on the
    page shows it); a click on a bar highlights that user everywhere: the whole page."""
    if st.session_state.get("highlight") != page.state.highlight:
        st.rerun()
    by = _measure_control(config)
    highlight = page.state.highlight
    if highlight is not None:
        highlight_note(highlight)
    # who used which tool, without a click: the bars split into the clients' segments
    if st.toggle(t("users.split"), key="users_split"):
        figure = figures.user_client_bars(
            page.data["by_user"],
            page.data["user_client_matrix"],
            by,
            highlight,
            figures.client_order(page.data["by_client"]),
            selectable=True,
        )
    else:
        figure = figures.user_bars(page.data["by_user"], by, highlight, selectable=True)
    plot(figure, key="user_chart", on_select=_on_user_click, selection_mode="points")


def highlight_note(who: str) -> None:
    """Whose usage is highlighted, with the button that clears it (every page that shows it)."""
    note, clear = st.columns([3, 2], vertical_alignment="center")
    note.markdown(t("highlight.active", who=who))
    clear.button(t("highlight.clear"), on_click=_set_highlight, args=(None,), key="clear_highlight")


def peers_panel(config: Config, reader: Any, page: Page) -> None:
    """A student's place among everyone: others as "Student A, B, ..." (anonymous), by
    name (named), or no panel at all (hidden). Only totals per person reach the page."""
    mode = config.dashboard.peers
    if mode == "hidden":
        return
    st.markdown(f"**{t('panel.peers')}**", help=t(f"panel.peers.{mode}"))
    _peers_chart(config, reader, page)


@st.fragment
def _peers_chart(config: Config, reader: Any, page: Page) -> None:
    """Reruns alone when its measure is switched."""
    mode = config.dashboard.peers
    by = _measure_control(config)
    peers = reader.peers(page.filters, named=mode == "named", by=by)
    figure = figures.user_bars(_peer_names(peers, mode), by, t("peers.you"), shares_only=mode == "anonymous")
    plot(figure, key="peers_chart")


def _peer_names(peers: pd.DataFrame, mode: str) -> pd.DataFrame:
    """The query names the student "You" and, unless names are shared, everyone else
    "Student A", "Student B", ...: those two words in the session's language."""

    def shown(name: str, you: bool, folded: Any) -> str:
        if not fmt.missing(folded):
            return plain("names.other", n=fmt.count(folded))
        if you:
            return t("peers.you")
        if mode == "anonymous":
            return t("peers.student", letter=name.removeprefix("Student "))
        return name

    users = zip(peers["user"].astype(str), peers["is_you"], peers["folded"], strict=True)
    return peers.assign(
        user=[shown(name, bool(pd.notna(you) and you), folded) for name, you, folded in users]
    )


def _measure_control(config: Config) -> str:
    by = (
        st.segmented_control(
            t("users.by"),
            USER_MEASURES,
            format_func=_labels("users.by", USER_MEASURES).__getitem__,
            key=WIDGETS["by"],
            label_visibility="collapsed",
        )
        or "spend"
    )
    view = st.session_state.get("view")
    if isinstance(view, ViewState) and view.by != by:  # switched in a rerun of its fragment alone
        _keep_view(config, replace(view, by=by))
    return by


def _on_user_click() -> None:
    selection = st.session_state.get("user_chart", {}).get("selection", {})
    st.session_state["highlight"] = toggled_highlight(
        selection.get("points", []), st.session_state.get("highlight")
    )


def toggled_highlight(points: list[dict[str, Any]], current: str | None) -> str | None:
    """A click on a user's bar highlights them; a click on the highlighted bar clears it;
    a click on nothing (an emptied selection) leaves the highlight as it is."""
    if not points:
        return current
    clicked = points[0].get("customdata")
    if isinstance(clicked, list):
        clicked = clicked[0] if clicked else None
    if clicked == "":  # the row of folded names ("other 99,980"): no one to highlight
        return current
    if clicked is None:
        clicked = points[0].get("y")
    if clicked is None:
        return current
    return None if str(clicked) == current else str(clicked)


def _set_highlight(user: str | None) -> None:
    st.session_state["highlight"] = user
