"""The filters sidebar and the URL: the range, time zone and filters as widgets, started
from a link once per session, kept across pages, and written back to the URL so that a
copied link reproduces the view."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import replace
from typing import Any
from zoneinfo import available_timezones as _available_timezones

import streamlit as st

from dashboard.strings import current_language, t
from dashboard.view_state import RANGES, ViewState, parse, to_params
from queries.runner import Reader
from settings.config import Config

WIDGETS = {
    "range": "f_range",
    "days": "f_days",
    "tz": "f_tz",
    "users": "f_users",
    "models": "f_models",
    "nodes": "f_nodes",
    "clients": "f_clients",
    "by": "f_by",
}
FILTERS_DRAWN = "filters_drawn"  # whether the last run drew the range and filters


@functools.cache
def available_timezones() -> frozenset[str]:
    """The system's zones: read from disk once per process, not on every rerun."""
    return frozenset(_available_timezones())


def filters_sidebar(
    config: Config, reader: Reader, *, with_users: bool = True, whole_view: bool = True
) -> ViewState:
    """The sidebar's widgets, started from the URL once per session; the URL then
    follows the widgets, so a copied link reproduces the view. A value the session may
    not see (another student's name) is simply not among the choices: it is dropped.

    Without `whole_view` (a page of the present state: budgets, the ETL's runs) only the
    time zone is offered; the range and filters are kept, untouched, for the other pages."""
    known = _known_values(reader)
    zones = reader.run("time_zones")["name"].tolist()
    default_tz = config.dashboard.timezone
    default_lang = config.dashboard.language
    if "view" not in st.session_state:  # the session's first run: the link says what to show
        params = {key: st.query_params.get_all(key) for key in st.query_params}
        state, _ = parse(params, default_tz=default_tz, known=known, zones=zones, default_lang=default_lang)
        st.session_state["view"], st.session_state["view_link"] = state, params
    # what the first link asked for and could not get, said again on every run in the
    # language of that run (the switch may have changed it since)
    _, notices = parse(
        st.session_state.get("view_link", {}),
        default_tz=default_tz,
        known=known,
        zones=zones,
        default_lang=default_lang,
    )
    # Streamlit forgets a page's widgets when another page is shown: the view, kept apart
    # from them, puts them back as they were
    kept: ViewState = st.session_state["view"]
    _seed_widgets(kept)
    sidebar = st.sidebar
    sidebar.header(t("filters.header"))
    for notice in notices:
        sidebar.warning(t("filters.notice", notice=notice))
    choices = sorted(set(zones) & available_timezones() | {default_tz})
    # The browser may not hold the zone's box: a page asked for before the first page had
    # drawn it (a link clicked right after signing in). Streamlit then sends the box a value
    # only if it was set in this run, else it shows its first choice, "Africa/Abidjan", and
    # sends that back on the next click (seen in the browser on every page, 1 in 5-10 such
    # clicks): set here, its value travels with the box.
    if WIDGETS["tz"] in st.session_state:
        st.session_state[WIDGETS["tz"]] = st.session_state[WIDGETS["tz"]]
    drawn_before = st.session_state.get(FILTERS_DRAWN, True)
    st.session_state[FILTERS_DRAWN] = whole_view
    if not whole_view:
        tz = sidebar.selectbox(t("filters.timezone"), choices, key=WIDGETS["tz"])
        sidebar.caption(t("filters.not_here"))
        state = replace(kept, tz=tz, lang=current_language())
        _keep_view(config, state)
        return state
    if not drawn_before:
        # Back from a page without them: the browser no longer holds these widgets, and
        # Streamlit sends it a value only if it was set in this run (after two such pages in
        # a row the box showed its first choice, "Last 24 hours", while the view was 30 days)
        for name in ("range", "days", "users", "models", "nodes", "clients"):
            if WIDGETS[name] in st.session_state:
                st.session_state[WIDGETS[name]] = st.session_state[WIDGETS[name]]
    range_key = sidebar.selectbox(
        t("filters.range"), RANGES, format_func=_labels("range", RANGES).__getitem__, key=WIDGETS["range"]
    )
    days: Any = None
    if range_key == "custom":
        days = sidebar.date_input(t("filters.days"), key=WIDGETS["days"])
    tz = sidebar.selectbox(t("filters.timezone"), choices, key=WIDGETS["tz"])
    chosen: dict[str, tuple[str, ...]] = {"users": ()}
    dimensions = [("model", "models"), ("node", "nodes"), ("client", "clients")]
    if with_users:
        dimensions.insert(0, ("user", "users"))
    for dim, field in dimensions:
        picked = sidebar.multiselect(
            t(f"filters.{field}"), known.get(dim, []), key=WIDGETS[field], placeholder=t("filters.all")
        )
        chosen[field] = tuple(picked)
    start_day, end_day = _day_pair(days)
    state = ViewState(
        range=range_key if range_key != "custom" or start_day else "7d",
        start_day=start_day,
        end_day=end_day,
        tz=tz,
        highlight=st.session_state.get("highlight") if with_users else None,
        by=st.session_state.get(WIDGETS["by"]) or "spend",
        lang=current_language(),
        **chosen,
    )
    _keep_view(config, state)
    return state


def _keep_view(config: Config, state: ViewState) -> None:
    """The session's view, and the URL made to follow it."""
    st.session_state["view"] = state
    wanted = to_params(state, default_tz=config.dashboard.timezone, default_lang=config.dashboard.language)
    current = {key: st.query_params.get_all(key) for key in st.query_params}
    if wanted != current:
        st.query_params.from_dict(wanted)


def _labels(prefix: str, keys: tuple[str, ...]) -> dict[str, str]:
    """A widget's choices as labels, looked up now: Streamlit (and AppTest) may call a
    format_func later from a thread without this session's context, where t() is English."""
    return {key: t(f"{prefix}.{key}") for key in keys}


def keep_page_widgets() -> None:
    """Widgets inside pages (the users' measure) keep their value across page changes."""
    key = WIDGETS["by"]
    if key in st.session_state:
        st.session_state[key] = st.session_state[key]


def _known_values(reader: Reader) -> dict[str, list[str]]:
    values = reader.run("dimensions")
    known: dict[str, list[str]] = {}
    for dimension, value in zip(values["dimension"], values["value"], strict=True):
        known.setdefault(str(dimension), []).append(str(value))
    return known


def _seed_widgets(state: ViewState) -> None:
    """Put back the widget values Streamlit does not hold (never one the user just set)."""
    if state.start_day and state.end_day:
        days = (state.start_day, state.end_day)
    else:
        today = dt.date.today()
        days = (today - dt.timedelta(days=6), today)
    values = {
        "range": state.range,
        "days": days,
        "tz": state.tz,
        "users": list(state.users),
        "models": list(state.models),
        "nodes": list(state.nodes),
        "clients": list(state.clients),
        "by": state.by,
    }
    for name, value in values.items():
        st.session_state.setdefault(WIDGETS[name], value)
    st.session_state.setdefault("highlight", state.highlight)


def _day_pair(value: Any) -> tuple[dt.date | None, dt.date | None]:
    if isinstance(value, tuple | list) and len(value) == 2 and all(isinstance(v, dt.date) for v in value):
        return value[0], value[1]
    return None, None
