"""The administrator's Nodes page: how each GPU node serves, from the logs alone:
time to first token, output speed, latency, prompt sizes, requests in flight and where
latency climbs with them, speed over time, failures by error class."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import figures, glance, panels, serving, tables, verdicts
from dashboard import format as fmt
from dashboard.panels.plot import plot
from dashboard.strings import plain, t
from dashboard.untrusted import short
from dashboard.view_state import ViewState
from queries import pages
from queries.runner import Reader
from settings.config import Config


def _columns() -> dict[str, Any]:
    """The tables' columns, labelled in the session's language (built per run: a module
    constant would keep the language of whichever session imported this first). Numbers
    carry no format here: FORMATS below writes them (11.7 s, not 11695 ms). The share is
    a number written as a percentage, not a progress bar: the bar took 150 px, which the
    medians' columns need on a 1280 px screen (the bars of the Overview show the shares)."""
    number = st.column_config.NumberColumn
    return {
        "requests": number(t("col.requests")),
        "requests_share": number(t("col.share")),
        "failure_rate": number(t("col.failure_rate")),
        "ttft_p50_ms": number(t("col.ttft_p50_ms")),
        "ttft_p95_ms": number(t("col.ttft_p95_ms")),
        "output_tps_p50": number(t("col.output_tps_p50")),
        "output_tps_p95": number(t("col.output_tps_p95")),
        "speed_too_short": number(t("col.speed_too_short")),
        "latency_p50_ms": number(t("col.latency_p50_ms")),
        "latency_p95_ms": number(t("col.latency_p95_ms")),
        "prompt_p50": number(t("col.prompt_p50")),
        "prompt_p95": number(t("col.prompt_p95")),
    }


# Thirteen columns (fourteen with a highlighted user) are 1,100 px or more, wider than the
# page on a 1280 or 1440 px screen: the frame's edge cut a value in half and the rest hid
# behind a scroll. So each table is two, one under the other, each the page's width: how
# much and how fast at the median (the highlighted user's requests beside the requests),
# then the slowest 5 % and the prompts' sizes.
MEDIANS = (
    "requests",
    "mine",
    "requests_share",
    "failure_rate",
    "ttft_p50_ms",
    "output_tps_p50",
    "speed_too_short",
    "latency_p50_ms",
)
TAILS = ("ttft_p95_ms", "output_tps_p95", "latency_p95_ms", "prompt_p50", "prompt_p95")


# each column written as the cards write its unit (prompt sizes are token counts)
FORMATS: dict[str, tables.Formatter] = {
    "requests": fmt.count,
    "requests_share": fmt.percent,
    "failure_rate": fmt.percent,
    "ttft_p50_ms": fmt.duration_ms,
    "ttft_p95_ms": fmt.duration_ms,
    "output_tps_p50": fmt.rate,
    "output_tps_p95": fmt.rate,
    "speed_too_short": fmt.count,
    "latency_p50_ms": fmt.duration_ms,
    "latency_p95_ms": fmt.duration_ms,
    "prompt_p50": fmt.count,
    "prompt_p95": fmt.count,
    "mine": fmt.count,
}


def render(config: Config, reader: Reader, state: ViewState, *, own_only: bool = False) -> None:
    """The page; `own_only`: a student's, whose reader holds only their requests."""
    st.header(t("page.nodes"))
    if own_only:
        st.info(t("nodes.own_only"), icon=":material/person:")
    status = panels.store_status(reader)
    if status is None:
        return
    now = dt.datetime.now(dt.UTC)
    filters = reader.resolve(state.filters(now))
    settings = config.dashboard
    who = state.highlight
    mine: dict[str, pd.DataFrame] = {}
    with panels.computing(state, now):
        data = pages.nodes(
            reader,
            filters,
            prompt_bands=settings.prompt_bands,
            stable_p95_ms=settings.stable_p95_ms,
            top_names=settings.top_names,
        )
        if who is not None:
            mine = pages.nodes(
                reader,
                replace(filters, users=(who,)),
                prompt_bands=settings.prompt_bands,
                stable_p95_ms=settings.stable_p95_ms,
                names=pages.NODES_HIGHLIGHTED,
                top_names=settings.top_names,
            )
        found = None if own_only else pages.glance(reader, filters, pages.VERDICT_QUERIES)
    if who is not None:
        panels.highlight_note(who)
    panels.freshness(status, config, state.tz, reader)
    worst_first: list[str] = []  # the nodes in trouble, the worst first
    if found is not None:  # a student's own requests are too few to judge a node by
        judged = verdicts.judge(found["nodes"], found["nodes_before"])
        worst_first = [v.node for v in judged if v.status in ("down", "failing", "slow")]
        with st.container(border=True, key="verdicts"):
            st.markdown(f"**{t('nodes.verdicts')}**", help=t("nodes.verdicts.help"))
            st.caption(glance.window_text(pages.verdict_window(filters)))
            st.markdown("\n".join(f"- {line}" for line in glance.nodes(judged, shown=len(judged))))

    # Below the verdicts, one tab per section: one under the other they were ~5,900 px
    # tall, and the load table or the failures took scrolling through everything above.
    # Every tab's content is still sent (hidden tabs are display:none), so each element's
    # key stays what it was.
    # The key is on a container around the tabs: with it on st.tabs itself (a widget's key
    # in this Streamlit), the sidebar's range showed "Last 24 hours" over a custom view in
    # the screenshots, twice; not so without.
    tabs = st.container(key="nodes_tabs").tabs([t(f"nodes.tab.{name}") for name in TABS])
    section = dict(zip(TABS, tabs, strict=True))
    with section["table"], st.container(border=True):
        st.markdown(f"**{t('nodes.table')}**", help=t("nodes.table.help"))
        _table(data["node_performance"], "node", mine.get("node_performance"), who)
        st.markdown(f"**{t('nodes.models')}**")
        _table(data["model_performance"], "model", None, None)
    span = panels.chart_span(filters)
    highlighted = serving.Highlighted(who, mine) if who is not None else None
    with section["load"]:
        left, right = st.columns(2)
        with left, st.container(border=True):
            st.markdown(f"**{t('nodes.concurrency')}**", help=t("nodes.concurrency.help"))
            figure = figures.node_lines(
                data["concurrency"], "peak_in_flight", t("axis.in_flight"), hover="%{y:,}", span=span
            )
            plot(figure, key="concurrency")
        with right, st.container(border=True):
            st.markdown(f"**{t('nodes.saturation')}**", help=t("nodes.saturation.help"))
            figure = figures.node_lines(
                data["latency_by_concurrency"],
                "latency_p50_ms",
                t("axis.latency"),
                mine.get("latency_by_concurrency"),
                who,
                x="in_flight",
            )
            plot(figure, key="saturation")
        csv = panels.csv_name("load_table", filters)
        serving.load_table(data, settings.stable_p95_ms, highlighted, worst_first, file_name=csv)
    with section["speed"]:
        # each node's median output speed and time to first token over time, side by side
        lines: tuple[tuple[str, str, str, str, dict[str, Any]], ...] = (
            # speed's hover as format.rate writes it; the time's the chart's own
            (
                "nodes.speed",
                "output_tps_p50",
                "axis.tps",
                "speed",
                {"hover": plain("unit.tok_s", value="%{y:,.1f}")},
            ),
            ("nodes.ttft", "ttft_p50_ms", "axis.ttft", "ttft", {}),
        )
        for column, (title, measure, axis, key, extra) in zip(st.columns(2), lines, strict=True):
            with column, st.container(border=True):
                st.markdown(f"**{t(title)}**")
                figure = figures.node_lines(
                    data["node_speed_by_bucket"],
                    measure,
                    t(axis),
                    mine.get("node_speed_by_bucket"),
                    who,
                    span=span,
                    **extra,
                )
                plot(figure, key=key)
    with section["bands"]:
        serving.prompt_bands(data, highlighted)
    with section["cache"]:
        serving.prefix_cache(data, span, highlighted)
    with section["routing"]:
        serving.routing(data, span, highlighted)
    with section["failures"], st.container(border=True):
        st.markdown(f"**{t('nodes.failures')}**")
        figure = figures.failures_over_time(data["failures_by_bucket"], span, width=figures.WIDE_PLOT_WIDTH)
        plot(figure, key="failures")


# The page's sections below the verdicts, a tab each (labels: strings.py nodes.tab.<name>)
TABS = ("table", "load", "speed", "bands", "cache", "routing", "failures")


def _table(frame: pd.DataFrame, label: str, mine: pd.DataFrame | None, who: str | None) -> None:
    """The medians' table, then the tails' (MEDIANS, TAILS), rows in the same order."""
    columns = {label: st.column_config.TextColumn(t(f"col.{label}")), **_columns()}
    shown = frame[[c for c in columns if c in frame]]
    if who is not None and mine is not None:
        counts = mine.set_index(label)["requests"] if not mine.empty else pd.Series(dtype="int64")
        shown = shown.assign(mine=shown[label].map(counts).fillna(0).astype("int64"))
        columns["mine"] = st.column_config.NumberColumn(plain("nodes.mine", who=short(who)))
    # a column with nothing in it says nothing (no request too short to time, no streamed
    # request for a time to first token): left out, the requests' counts kept
    said = [c for c in shown if c in KEPT or not (shown[c].isna() | shown[c].eq(0)).all()]
    for part in (MEDIANS, TAILS):
        names = [label, *(c for c in part if c in said)]
        tables.show(tables.styled(shown[names], FORMATS), {c: columns[c] for c in names})


KEPT = frozenset({"node", "model", "requests", "mine", "requests_share"})
