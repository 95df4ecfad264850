"""The panels the pages are made of: the filters sidebar (and the URL), freshness, cards,
charts, users and peers bars, budget bars, downloads. They only lay out: numbers come
from the query layer (through the session's scoped reader), figures from figures.py."""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any
from zoneinfo import ZoneInfo
from zoneinfo import available_timezones as _available_timezones

import pandas as pd
import streamlit as st

from contract.measures import BY_NAME
from dashboard import figures, forecasts, tables, untrusted
from dashboard import format as fmt
from dashboard import limits as rate_limits
from dashboard.strings import current_language, plain, t
from dashboard.view_state import RANGES, USER_MEASURES, ViewState, parse, to_params
from queries.filters import Filters
from queries.pages import NAMED, WITH_HIGHLIGHT, overview, overview_jobs
from queries.runner import Job, Reader
from settings.config import Config, DashboardSettings

CARDS = ("spend_usd", "requests", "total_tokens", "cache_hit_rate", "success_rate", "latency_p50_ms")
ADDITIVE = {"spend_usd", "requests", "total_tokens"}  # a person's share of these means something
DELTA_COLORS = {"cache_hit_rate": "normal", "success_rate": "normal", "latency_p50_ms": "inverse"}
HIGHLIGHT_QUERIES = ("totals", "by_bucket", "by_node", "by_client", "by_model")
# the users (from the top of their bars) whose highlighted parts the Overview computes
# ahead, on one background thread, for a click on their bar: 0.28 s each at 1M requests
# (2.2 s for eight), shared by every session; about what the first screen shows of them
PREFETCH_USERS = 8
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
    found = overview(
        reader,
        filters,
        top_names=settings.top_names,
        grid_names=settings.grid_names,
        highlight=state.highlight,
    )
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
        jobs = {name: page[name] for name in WITH_HIGHLIGHT} | highlight_jobs(found, filters, who, settings)
        asked |= {f"{name} of {who}": job for name, job in jobs.items()}
    return asked


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


def _mine(page: Page, key: str) -> tuple[pd.DataFrame | None, str | None]:
    if page.state.highlight is None:
        return None, None
    return page.mine[key], page.state.highlight


# --- the top of every page ------------------------------------------------------------------


def store_status(reader: Reader) -> pd.Series | None:
    """The store's status, or None after showing how to fill an empty store."""
    status = reader.run("store_status").iloc[0]
    if int(status["requests"]) == 0:
        st.subheader(t("empty.title"))
        st.write(t("empty.body"))
        st.code("python -m etl run --source postgresql://USER:PASSWORD@HOST:5432/litellm", language="bash")
        return None
    return status


def freshness(status: pd.Series, config: Config, tz: str, reader: Reader, *, reasons: bool = True) -> None:
    """How fresh the data is; with `reasons` (administrators) also why not: a failed run's
    error, a file that could not be read. Students learn that and since when, not why
    (an error can name the database, its host and user)."""
    newest = _local(status["last_request"], tz)
    last_run = status["last_ok_run"]
    st.caption(t("fresh.caption", newest=newest, run=_local(last_run, tz), tz=tz))
    if status["last_run_status"] == "failed":
        if reasons:
            st.error(t("fresh.failed", error=status["last_run_error"]))
        else:
            st.warning(t("fresh.failed_student", when=_local(status["last_run"], tz), newest=newest))
    if pd.notna(last_run):
        age = pd.Timestamp.now(tz="UTC") - last_run
        if age > pd.Timedelta(minutes=config.dashboard.stale_after_minutes):
            st.warning(
                t("fresh.stale" if reasons else "fresh.stale_student", age=fmt.age(age.total_seconds()))
            )
    if reader.last_error:
        st.warning(t("fresh.reload_failed", error=reader.last_error) if reasons else t("fresh.incomplete"))
    damaged = reader.damaged()
    if damaged:
        if reasons:
            named = "; ".join(f"{name} ({error})" for name, error in damaged.items())
            st.warning(t("fresh.damaged", files=named))
        else:
            st.warning(t("fresh.incomplete"))


def _local(value: Any, tz: str) -> str:
    return fmt.timestamp(value, tz) or t("fresh.never")


# --- filters and the URL ----------------------------------------------------------------


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


# --- cards and charts ---------------------------------------------------------------------


def cards(page: Page) -> None:
    totals = page.data["totals"].iloc[0]
    previous = page.data["totals_previous"].iloc[0]
    mine = page.mine["totals"].iloc[0] if page.mine else None
    before = _previous_period(page)
    compared = before is not None and fmt.comparable(totals["requests"], previous["requests"])
    partial = figures.unfinished(chart_span(page.filters))
    # two rows of three: wide enough for "$1,234.56" and a sparkline on a laptop screen
    slots = [column for _ in range(2) for column in st.columns(3)]
    for slot, name in zip(slots, CARDS, strict=True):
        metric = BY_NAME[name]
        delta = fmt.change(totals[name], previous[name], metric.unit) if compared else None
        with slot:
            st.metric(
                t(f"card.{name}"),
                fmt.by_unit(totals[name], metric.unit),
                delta=delta.text if delta else None,
                delta_color=DELTA_COLORS.get(name, "off") if delta and delta.arrow == "auto" else "off",  # type: ignore[arg-type]
                delta_arrow=delta.arrow if delta else "auto",
                delta_description=t("card.vs", period=before) if delta and before else None,
                help=t(f"card.{name}.help"),
                border=True,
                chart_data=figures.sparkline(page.data["by_bucket"], name, unfinished=partial) or None,
                chart_type="area" if name in ADDITIVE else "line",
            )
            if mine is not None:
                st.caption(_mine_text(page.state.highlight or "", name, mine[name], totals[name]))
    if before is not None and not compared:
        n = 0 if fmt.missing(previous["requests"]) else int(previous["requests"])
        st.caption(t("card.not_compared", period=before, n=n))


def _previous_period(page: Page) -> str | None:
    """The period the cards compare with, as dates in the page's zone: "Nov 14 – Nov 20"."""
    if page.filters.start is None or page.filters.end is None:
        return None
    before = page.filters.previous()
    assert before.start is not None and before.end is not None
    first = before.start.astimezone(ZoneInfo(page.filters.tz)).date()
    last = (before.end - dt.timedelta(microseconds=1)).astimezone(ZoneInfo(page.filters.tz)).date()
    # the year left out in Korean when it is this one: 2026년 11월 22일 – 2026년 11월 28일 대비
    # was cut off at 1440 px in every card
    year = dt.datetime.now(ZoneInfo(page.filters.tz)).year
    start, end = fmt.day(first, this_year=year), fmt.day(last, this_year=year)
    period = start if first == last else t("card.period", start=start, end=end)
    return t("card.month_to_date", period=period) if page.filters.month_to_date else period


def _mine_text(who: str, name: str, value: Any, total: Any) -> str:
    unit = BY_NAME[name].unit
    if name in ADDITIVE and not fmt.missing(total) and total:
        share = fmt.percent(float(value) / float(total))
        return t("card.mine_share", who=who, value=fmt.by_unit(value, unit), share=share)
    return t("card.mine", who=who, value=fmt.by_unit(value, unit))


def chart_span(filters: Filters) -> figures.Span | None:
    """The range as the time charts draw it: in the charts' local, zone-less times."""
    if filters.start is None or filters.end is None:
        return None
    zone = ZoneInfo(filters.tz)
    start, end = (moment.astimezone(zone).replace(tzinfo=None) for moment in (filters.start, filters.end))
    return figures.Span(str(start), str(end), filters.bucket_size)


def time_charts(page: Page) -> None:
    """Tokens by kind and prompt caching, then requests and (optionally) the GPU nodes;
    the three over time cover the same span."""
    span = chart_span(page.filters)
    series, (mine, who) = page.data["by_bucket"], _mine(page, "by_bucket")
    left, right = st.columns([3, 2])
    with left, st.container(border=True):
        st.markdown(f"**{t('panel.tokens')}**", help=t("panel.tokens.help"))
        st.plotly_chart(figures.tokens_over_time(series, mine, who, span=span), key="tokens")
    with right, st.container(border=True):
        st.markdown(f"**{t('panel.cache')}**")
        st.plotly_chart(figures.cache_trend(series, mine, who, span=span), key="cache")
    left, right = st.columns([3, 2])
    with left, st.container(border=True):
        st.markdown(f"**{t('panel.requests')}**")
        st.plotly_chart(figures.requests_over_time(series, mine, who, span=span), key="requests")
    with right, st.container(border=True):
        st.markdown(f"**{t('panel.nodes')}**")
        figure = figures.share_bars(
            page.data["by_node"], "node", ("requests", "tokens"), *_mine(page, "by_node")
        )
        st.plotly_chart(figure, key="nodes")


def clients_panel(page: Page, *, matrix: bool) -> None:
    st.markdown(f"**{t('panel.clients')}**")
    figure = figures.share_bars(
        page.data["by_client"],
        "client",
        ("requests", "tokens", "spend"),
        *_mine(page, "by_client"),
        height=260,
    )
    st.plotly_chart(figure, key="clients")
    if matrix:
        st.markdown(f"**{t('panel.matrix')}**")
        st.plotly_chart(
            figures.client_matrix(
                page.data["user_client_matrix"],
                page.state.highlight,
                figures.user_order(page.data["by_user"], page.state.by),
                figures.client_order(page.data["by_client"]),
            ),
            key="matrix",
        )


def models_panel(page: Page) -> None:
    with st.container(border=True):
        st.markdown(f"**{t('panel.models')}**")
        figure = figures.share_bars(
            page.data["by_model"],
            "model",
            ("requests", "tokens", "spend"),
            *_mine(page, "by_model"),
            height=240,
        )
        st.plotly_chart(figure, key="models")


# --- users, peers and the highlight -------------------------------------------------------


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
        )
    else:
        figure = figures.user_bars(page.data["by_user"], by, highlight)
    st.plotly_chart(figure, key="user_chart", on_select=_on_user_click, selection_mode="points")


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
    st.plotly_chart(figure, key="peers_chart")


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


# --- budgets ------------------------------------------------------------------------------


def budget_bars(budgets: pd.DataFrame, limits: pd.DataFrame, tz: str) -> None:
    """Each of a student's keys: spend against its budget, what is left, whether it lasts
    until it resets, and its rate limits with its busiest minute and refusals (`limits`:
    queries/key_limits.sql); then the person's own budget, if LiteLLM has one for them."""
    st.markdown(f"**{t('panel.budget')}**")
    if budgets.empty:
        st.caption(t("budget.no_keys"))
        return
    st.html(LEVEL_BARS)
    limits_by_key = {row["api_key_hash"]: row for row in limits.to_dict("records")}
    for index, key in enumerate(budgets.to_dict("records")):
        name = key["key_alias"] or key["key_name"] or t("budget.key")
        level = (
            fmt.budget_level(key["budget_used"], key["forecast"])
            if not fmt.missing(key["max_budget"])
            else "none"
        )
        if level != "none":  # the same scale and colours as the administrators' table
            st.markdown(f":{fmt.LEVEL_COLORS[level]}-badge[{t(f'budget.level.{level}')}]")
        if key["forecast"] == "invalid":  # a budget or spend LiteLLM holds that cannot be read
            st.markdown(f"**{untrusted.markdown(name)}**")
            st.markdown(forecasts.sentence(key, tz))
        elif fmt.missing(key["max_budget"]):
            st.progress(0.0, text=t("budget.unlimited", key=name, spend=fmt.usd(key["spend"])))
        else:
            used = float(key["budget_used"] or 0.0)
            text = t(
                "budget.used",
                key=name,
                spend=fmt.usd(key["spend"]),
                budget=fmt.usd(key["max_budget"]),
                left=fmt.usd(key["budget_left"]),
                share=fmt.percent(used),
            )
            _level_bar(level, f"key{index}", min(max(used, 0.0), 1.0), text)
            st.markdown(forecasts.sentence(key, tz))
            note = forecasts.period_note(key)
            if note:
                st.markdown(note)
        details = [_budget_period(key, tz)]
        if not fmt.missing(key["budget_reset_at"]):
            details.append(
                t(
                    "budget.resets",
                    when=_local(key["budget_reset_at"], tz),
                    every=fmt.period(key["budget_duration"]),
                )
            )
        named = [
            f"{t(label)} {int(key[column]):,}"
            for label, column in (("col.tpm", "tpm_limit"), ("col.rpm", "rpm_limit"))
            if not fmt.missing(key[column])
        ]
        details.append(t("budget.limits", limits=" · ".join(named)) if named else t("budget.no_limits"))
        st.caption(" · ".join(details))
        measured = limits_by_key.get(key["api_key_hash"])
        for sentence in rate_limits.sentences(measured, tz) if measured is not None else ():
            st.markdown(sentence)
    first = budgets.iloc[0]
    if first["user_forecast"] == "invalid":
        st.markdown(forecasts.sentence(first, tz, person=True))
    elif not fmt.missing(first["user_max_budget"]):
        spent, budget = float(first["user_spend"] or 0), float(first["user_max_budget"])
        used = spent / budget if budget else 1.0
        text = t("budget.user", spend=fmt.usd(spent), budget=fmt.usd(budget))
        _level_bar(fmt.budget_level(used, first["user_forecast"]), "user", min(used, 1.0), text)
        st.markdown(forecasts.sentence(first, tz, person=True))


# A budget bar's fill in its level's colour: Streamlit draws every progress bar in the
# theme's primary colour, which made a key at 20 % as alarming as one at 90 %. Static CSS,
# no data in it; each bar sits in a container whose key names its level.
LEVEL_BARS = (
    "<style>"
    + "".join(
        f"[class*='st-key-budget-{level}-'] [data-testid='stProgressBarTrack'] > div "
        f"{{ background: {colour}; }}"
        for level, colour in fmt.LEVEL_HEX.items()
    )
    + "</style>"
)


def _budget_period(key: Mapping[Any, Any], tz: str) -> str:
    """Which spend the budget's figures count: LiteLLM's own, since its period began (or
    since the key was made), not the range the cards below show."""
    start = key["budget_period_start"]
    if fmt.missing(start):
        return t("budget.period_all")
    return t("budget.period_since", start=_local(start, tz))


def _level_bar(level: str, name: str, value: float, text: str) -> None:
    with st.container(key=f"budget-{level}-{name}"):
        st.progress(value, text=text)


# --- download -----------------------------------------------------------------------------


def csv_bytes(frame: pd.DataFrame, tz: str | None = None) -> bytes:
    """The frame as a spreadsheet opens it safely: a name such as =HYPERLINK(...) stays text.
    Lines end in CRLF (RFC 4180), so that a carriage return inside a name is quoted too.
    With `tz`, every time column is written in that zone and says so in its header
    ("bucket_start (Asia/Seoul)"): a bucket was local and its start UTC, unmarked."""
    frame = frame.drop(columns=["folded", "users_folded", "clients_folded"], errors="ignore")  # named already
    if tz is not None:
        frame = _local_times(frame, tz)
    return untrusted.csv_frame(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def _local_times(frame: pd.DataFrame, tz: str) -> pd.DataFrame:
    """Time columns as local wall-clock times in `tz` (zone-less ones are local already:
    the buckets), each header naming the zone."""
    out = frame.copy()
    renamed = {}
    for column in frame.columns:
        values = frame[column]
        if isinstance(values.dtype, pd.DatetimeTZDtype):
            out[column] = values.dt.tz_convert(tz).dt.tz_localize(None)
        elif not pd.api.types.is_datetime64_dtype(values.dtype):
            continue
        renamed[column] = f"{column} ({tz})"
    return out.rename(columns=renamed)


def csv_name(view: str, filters: Filters) -> str:
    """A download's file name: the view and the range's local days, by_user_2026-12-01_2026-12-07.csv."""
    if filters.start is None or filters.end is None:
        return f"{view}.csv"
    zone = ZoneInfo(filters.tz)
    first = filters.start.astimezone(zone).date()
    last = (filters.end - dt.timedelta(microseconds=1)).astimezone(zone).date()
    return f"{view}_{first.isoformat()}_{last.isoformat()}.csv"


def downloads(page: Page, keys: tuple[tuple[str, str], ...]) -> None:
    with st.expander(t("download.header")):
        for column, (key, label) in zip(st.columns(len(keys)), keys, strict=True):
            column.download_button(
                t(label),
                # The bytes, not a callable: Streamlit disables a button whose file is a
                # callable while the browser asks the server to make it, so the second click
                # of a double click fell on a disabled button and gave no file. Bytes make
                # the button a plain link to a file whose id is its content's hash (the same
                # across reruns), and every click downloads it. The frames are aggregates: a
                # few hundred rows at most.
                csv_bytes(page.data[key], page.filters.tz),
                file_name=csv_name(key, page.filters),
                mime="text/csv",
                key=f"download_{key}",
                # No rerun on click: the file depends on nothing the click changes, so a
                # rerun would have nothing to do (and a person would see the page redraw).
                on_click="ignore",
            )
