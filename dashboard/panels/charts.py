"""The page's cards and charts: the totals with their change and sparklines, the charts
over time, the GPU nodes', clients' and models' bars and the users-by-clients grid."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import streamlit as st

from contract.measures import BY_NAME
from dashboard import figures
from dashboard import format as fmt
from dashboard.panels.loading import Page
from dashboard.panels.plot import plot
from dashboard.strings import t
from queries.filters import Filters

CARDS = ("spend_usd", "requests", "total_tokens", "cache_hit_rate", "success_rate", "latency_p50_ms")
ADDITIVE = {"spend_usd", "requests", "total_tokens"}  # a person's share of these means something
DELTA_COLORS = {"cache_hit_rate": "normal", "success_rate": "normal", "latency_p50_ms": "inverse"}


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
        plot(figures.tokens_over_time(series, mine, who, span=span), key="tokens")
    with right, st.container(border=True):
        st.markdown(f"**{t('panel.cache')}**")
        plot(figures.cache_trend(series, mine, who, span=span), key="cache")
    left, right = st.columns([3, 2])
    with left, st.container(border=True):
        st.markdown(f"**{t('panel.requests')}**")
        plot(figures.requests_over_time(series, mine, who, span=span), key="requests")
    with right, st.container(border=True):
        st.markdown(f"**{t('panel.nodes')}**")
        figure = figures.share_bars(
            page.data["by_node"], "node", ("requests", "tokens"), *_mine(page, "by_node")
        )
        plot(figure, key="nodes")


def clients_panel(page: Page, *, matrix: bool) -> None:
    st.markdown(f"**{t('panel.clients')}**")
    figure = figures.share_bars(
        page.data["by_client"],
        "client",
        ("requests", "tokens", "spend"),
        *_mine(page, "by_client"),
        height=260,
    )
    plot(figure, key="clients")
    if matrix:
        st.markdown(f"**{t('panel.matrix')}**")
        plot(
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
        plot(figure, key="models")


def _mine(page: Page, key: str) -> tuple[pd.DataFrame | None, str | None]:
    if page.state.highlight is None:
        return None, None
    return page.mine[key], page.state.highlight
