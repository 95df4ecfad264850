"""Pure figure builders: DataFrames (and the highlighted user's share of them) in,
Plotly figures out. No Streamlit here; the page lays them out.

Highlight: when a user is highlighted, their part is drawn in the accent colour and
the rest dimmed: over time as an accent line over the dimmed chart, in the category
bars as an accent segment stacked under the dimmed rest, in the user bars as the one
accent bar among dimmed ones.

Each builder is `@shared`: built once per data, highlight and language, and the same
figure handed to every session (dashboard/memo.py); callers never change a figure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from contract.measures import Unit
from dashboard import format as fmt
from dashboard.memo import shared
from dashboard.strings import plain, t
from dashboard.untrusted import html
from dashboard.untrusted import label as _label

ACCENT = "#7C5CFF"
BASE = "#5B8DEF"
CACHE_LINE = "#D97706"
FAILURE = "#E4572E"
KIND_COLORS = {
    "uncached_prompt_tokens": "#5B8DEF",
    "cached_tokens": "#3BB38C",
    "answer_tokens": "#F2A541",
    "reasoning_tokens": "#C86FC9",
}
KINDS = tuple(KIND_COLORS)
PROMPT_AREAS = (("cached_tokens", "series.cached"), ("uncached_prompt_tokens", "series.uncached"))
DIMMED = 0.4  # opacity of everything but the highlighted user (0.28 was about 1.5:1 on dark)
HEIGHT = 320
BAR_ROW, SHARE_FRAME = 34, 90  # a category's row and the rest of a bar chart, in pixels
USER_ROW, USER_FRAME = 30, 60  # the users' bars: a row per person, and the margins
MATRIX_ROW, MATRIX_FRAME = 30, 120  # the users-by-clients grid: a row each, and room for its scale


UNKNOWN = fmt.UNKNOWN


def label(text: object) -> str:
    """A category's label in a chart: the page's word for an unknown, else the name,
    short and escaped for Plotly."""
    return t(UNKNOWN[text]) if isinstance(text, str) and text in UNKNOWN else _label(text)


def _figure(
    traces: list[dict[str, Any]],
    layout: dict[str, Any] | None = None,
    *,
    height: int = HEIGHT,
    legend: bool = True,
) -> go.Figure:
    """The figure of these traces, with the page's common layout under `layout`.

    Traces and layout are plain dicts, checked by Plotly once in the tests
    (tests/test_dashboard_figures.py validates every builder's figure) rather than on every
    build: validating while building took 10 to 20 ms a figure, most of a page's time
    when a highlight or a new range needs new figures for fifty sessions."""
    common: dict[str, Any] = {
        "height": height,
        "margin": {"l": 8, "r": 8, "t": 8, "b": 8},
        "showlegend": legend,
        "legend": {
            "orientation": "h",
            "yanchor": "bottom",
            "y": 1.0,
            "xanchor": "left",
            "x": 0,
            "traceorder": "normal",
        },
        "hoverlabel": {"namelength": -1},
        "bargap": 0.2,
    }
    return go.Figure(data=traces, layout=_merged(common, layout or {}), _validate=False)


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`base` updated by `extra`, nested dicts merged (what update_layout does); an empty
    dict in `extra` changes nothing."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and not value:
            continue
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merged(out[key], value)
        else:
            out[key] = value
    return out


def _empty() -> go.Figure:
    return _figure(
        [],
        {
            "annotations": [
                {
                    "text": t("empty.range"),
                    "showarrow": False,
                    "x": 0.5,
                    "y": 0.5,
                    "xref": "paper",
                    "yref": "paper",
                }
            ],
            "xaxis": {"visible": False},
            "yaxis": {"visible": False},
        },
        legend=False,
    )


def _values(column: pd.Series) -> Any:
    """A column as Plotly takes it: numbers and times as a NumPy array (numbers travel
    as base64), anything else as a list."""
    if pd.api.types.is_datetime64_any_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        return column.to_numpy()
    if pd.api.types.is_numeric_dtype(column.dtype):
        if column.isna().any():
            return column.to_numpy(dtype="float64", na_value=np.nan)
        return column.to_numpy()
    return column.tolist()


def _has_data(frame: pd.DataFrame | None, column: str) -> bool:
    return frame is not None and not frame.empty and bool(frame[column].fillna(0).sum() > 0)


@shared
def tokens_over_time(
    series: pd.DataFrame,
    mine: pd.DataFrame | None = None,
    who: str | None = None,
    *,
    span: Span | None = None,
) -> go.Figure:
    """Stacked bars per bucket: uncached prompt, cached prompt, answer, reasoning."""
    tokens = plain("hover.tokens", value="%{y:,}")
    stacks = [(kind, t(f"kind.{kind}"), KIND_COLORS[kind]) for kind in KINDS]
    return _stacked_over_time(
        series,
        "total_tokens",
        stacks,
        hover=tokens,
        mine_hover=tokens,
        axis=t("axis.tokens"),
        mine=mine,
        who=who,
        span=span,
    )


@shared
def requests_over_time(
    series: pd.DataFrame,
    mine: pd.DataFrame | None = None,
    who: str | None = None,
    *,
    span: Span | None = None,
) -> go.Figure:
    """Stacked bars per bucket: successful and failed requests."""
    outcomes = (("successes", BASE), ("failures", FAILURE))
    stacks = [(column, t(f"series.{column}"), color) for column, color in outcomes]
    return _stacked_over_time(
        series,
        "requests",
        stacks,
        hover="%{y:,}",
        mine_hover=plain("hover.requests", value="%{y:,}"),
        axis=t("axis.requests"),
        mine=mine,
        who=who,
        span=span,
    )


def _stacked_over_time(
    series: pd.DataFrame,
    total: str,
    stacks: list[tuple[str, str, str]],
    *,
    hover: str,
    mine_hover: str,
    axis: str,
    mine: pd.DataFrame | None,
    who: str | None,
    span: Span | None,
) -> go.Figure:
    """Bars per bucket stacked from `stacks` (column, name, colour); with a highlight,
    dimmed under the person's own `total` as an accent line."""
    if not _has_data(series, total):
        return _empty()
    dim = who is not None and mine is not None
    buckets = _values(series["bucket"])
    traces = [
        {
            "type": "bar",
            "x": buckets,
            "y": _values(series[column]),
            "name": name,
            "marker": {"color": color},
            "opacity": DIMMED if dim else 1.0,
            "hovertemplate": hover + "<extra>%{fullData.name}</extra>",
            **_periodic(span),
        }
        for column, name, color in stacks
    ]
    if dim and mine is not None:
        traces.append(_accent_line(mine, total, who or "", mine_hover) | _periodic(span))
    tallest = max(series[total].max(), mine[total].max() if dim and mine is not None else 0)
    layout = {
        "barmode": "stack",
        "hovermode": "x unified",
        "yaxis": _value_axis(tallest, "tokens" if total == "total_tokens" else "count", axis),
        "xaxis": _time_axis(series["bucket"], span, DATE_LABELS["wide"]),
        "shapes": _not_yet(span),
    }
    return _figure(traces, layout)


@shared
def cache_trend(
    series: pd.DataFrame,
    mine: pd.DataFrame | None = None,
    who: str | None = None,
    *,
    span: Span | None = None,
) -> go.Figure:
    """Cached and uncached prompt tokens per bucket (areas) and the cache hit rate (line
    on a second axis at the right). The rate is a gap where a bucket had no prompt, and
    each bucket's rate is marked: a line alone draws nothing for a bucket between two gaps."""
    if not _has_data(series, "total_tokens"):
        return _empty()
    dim = who is not None and mine is not None
    buckets = _values(series["bucket"])
    traces: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": buckets,
            "y": _values(series[column]),
            "name": t(name),
            "stackgroup": "prompt",
            "line": {"width": 0.5, "color": KIND_COLORS[column]},
            "opacity": DIMMED if dim else 0.85,
            "hovertemplate": plain("hover.tokens", value="%{y:,}") + "<extra>%{fullData.name}</extra>",
            **_periodic(span),
        }
        for column, name in PROMPT_AREAS
    ]
    traces.append(
        {
            "type": "scatter",
            "x": buckets,
            "y": _values(series["cache_hit_rate"]),
            "name": t("series.cache_hit_rate") + (f" ({t('series.everyone').lower()})" if dim else ""),
            "mode": "lines+markers",
            "marker": {"size": 5},
            # amber: as visible on the dark theme's background as on the light one
            "line": {
                "color": "#888888" if dim else CACHE_LINE,
                "width": 2,
                "dash": "dot" if dim else "solid",
            },
            "hovertext": [fmt.percent(v) for v in series["cache_hit_rate"]],
            "hovertemplate": "%{hovertext}<extra>%{fullData.name}</extra>",
            "yaxis": "y2",
            **_periodic(span),
        }
    )
    if dim and mine is not None:
        traces.append(
            {
                "type": "scatter",
                "x": _values(mine["bucket"]),
                "y": _values(mine["cache_hit_rate"]),
                "name": f"{t('series.cache_hit_rate')} ({label(who)})",
                "mode": "lines+markers",
                "line": {"color": ACCENT, "width": 3},
                "hovertext": [fmt.percent(v) for v in mine["cache_hit_rate"]],
                "hovertemplate": "%{hovertext}<extra>%{fullData.name}</extra>",
                "yaxis": "y2",
                **_periodic(span),
            }
        )
    layout = {
        "hovermode": "x unified",
        "xaxis": {"domain": [0, 0.94], **_time_axis(series["bucket"], span, DATE_LABELS["cache"])},
        "shapes": _not_yet(span),
        "yaxis": _value_axis(
            (series["cached_tokens"] + series["uncached_prompt_tokens"]).max(), "tokens", t("axis.tokens")
        ),
        "yaxis2": {
            "overlaying": "y",
            "side": "right",
            "title": {"text": t("series.cache_hit_rate")},
            "tickmode": "array",
            "tickvals": RATE_TICKS,
            "ticktext": [fmt.percent(v, digits=0) for v in RATE_TICKS],  # 25 % as the cards write it
            "range": [0, 1],
            "showgrid": False,
        },
    }
    return _figure(traces, layout)


@shared
def share_bars(
    frame: pd.DataFrame,
    category: str,
    measures: Sequence[str],
    mine: pd.DataFrame | None = None,
    who: str | None = None,
    *,
    height: int = HEIGHT,
) -> go.Figure:
    """Horizontal bars per category (node, client, model), one panel per measure side by
    side on shared rows, each bar labelled with its share; the highlighted user's part
    stacked first in accent, the rest dimmed."""
    if frame.empty or not frame["requests"].sum():
        return _empty()
    order = list(reversed(category_order(frame, category)))  # a bar chart's first row is at the bottom
    names = [html(c) for c in order]
    frame = frame.set_index(category).loc[order]
    part = None
    if who is not None and mine is not None:
        part = mine.set_index(category).reindex(order).fillna(0)
    traces: list[dict[str, Any]] = []
    for col, measure in enumerate(measures, start=1):
        column = _column(measure)
        axis = "x" if col == 1 else f"x{col}"
        total = frame[column].astype(float)
        shares = total / total.sum() if total.sum() else total * 0
        rest = total - part[column] if part is not None else total
        if part is not None:
            traces.append(
                {
                    "type": "bar",
                    "y": order,
                    "x": _values(part[column]),
                    "xaxis": axis,
                    "orientation": "h",
                    "name": label(who),
                    "marker": {"color": ACCENT},
                    "showlegend": col == 1,
                    "legendgroup": "who",
                    "hovertext": [
                        f"{name}: {_hover_value(measure, v)}"
                        for name, v in zip(names, part[column], strict=True)
                    ],
                    "hovertemplate": "%{hovertext}<extra>%{fullData.name}</extra>",
                }
            )
        traces.append(
            {
                "type": "bar",
                "y": order,
                "x": _values(rest),
                "xaxis": axis,
                "orientation": "h",
                "name": t("series.rest") if part is not None else t(f"measure.{measure}"),
                "marker": {"color": _dim(BASE) if part is not None else BASE},
                "text": [fmt.percent(s) for s in shares],
                "textposition": "outside",
                "cliponaxis": False,
                "customdata": [[float(v), float(s)] for v, s in zip(total, shares, strict=True)],
                "hovertext": [
                    f"{name}: {_hover_value(measure, v)} ({fmt.percent(s)})"
                    for name, v, s in zip(names, total, shares, strict=True)
                ],
                "hovertemplate": "%{hovertext}<extra></extra>",
                "showlegend": part is not None and col == 1,
                "legendgroup": "rest",
            }
        )
    layout = _side_by_side(
        [t(f"measure.{m}") for m in measures],
        [_label_room(frame[_column(m)].astype(float)) for m in measures],
    )
    layout["margin"] = {"t": 28}
    layout["yaxis"] |= categories(order)
    # sized to its bars: two clients must not fill a chart made for ten with giant blocks
    fitted = min(height, BAR_ROW * len(order) + SHARE_FRAME)
    return _figure(traces, layout, height=fitted, legend=False)  # the page names who


# Plotly leaves no room for a horizontal bar's outside text: a long bar's label ran past its
# panel, into the next one or off the chart, and lost its "%" (the GPU nodes' panels are 90 px
# wide on a 1280 px screen). So each panel's value axis ends where the longest label still
# fits after its bar in a panel of SHARE_PANEL_PX, the narrowest the page draws; a wider
# panel has room to spare. LABEL_PX: a share label's width per character at Plotly's 12 px
# font ("60.3%", Korean, is 31 px in Chromium; Plotly puts 3 px between bar and label).
SHARE_PANEL_PX, LABEL_PX, LABEL_GAP_PX = 88, 6.2, 4


def _label_room(totals: pd.Series) -> float:
    """The end of a panel's value axis that leaves each bar's share label room after it.
    Shares are written as format.percent writes them (what the bars' text says)."""
    shares = totals / totals.sum() if totals.sum() else totals * 0
    end = 0.0
    for total, share in zip(totals, shares, strict=True):
        free = SHARE_PANEL_PX - LABEL_GAP_PX - LABEL_PX * len(fmt.percent(share))  # px left for the bar
        end = max(end, float(total) * SHARE_PANEL_PX / free)
    return end or 1.0


def _side_by_side(titles: list[str], ends: list[float], gap: float = 0.04) -> dict[str, Any]:
    """Panels side by side on one shared category axis, each with its own value axis
    (from 0 to its `ends`) and title: what make_subplots(rows=1, shared_yaxes=True) gives,
    written out because make_subplots alone takes ~30 ms, more than everything else in the
    figure."""
    width = (1 - gap * (len(titles) - 1)) / len(titles)
    layout: dict[str, Any] = {"barmode": "stack", "yaxis": {"automargin": True}, "annotations": []}
    for i, (title, end) in enumerate(zip(titles, ends, strict=True)):
        start = i * (width + gap)
        layout["xaxis" if i == 0 else f"xaxis{i + 1}"] = {
            "domain": [start, start + width],
            "anchor": "y",
            "range": [0, end],
            "showticklabels": False,
            "showgrid": False,
            "zeroline": False,
        }
        layout["annotations"].append(
            {
                "text": title,
                "x": start + width / 2,
                "y": 1.0,
                "xref": "paper",
                "yref": "paper",
                "xanchor": "center",
                "yanchor": "bottom",
                "showarrow": False,
                "font": {"size": 12},
            }
        )
    return layout


@shared
def user_bars(
    users: pd.DataFrame, by: str, highlight: str | None = None, *, shares_only: bool = False
) -> go.Figure:
    """One horizontal bar per user, largest on top, labelled with the user's share; a
    click selects the bar's user (customdata). One trace, per-bar colours, so that the
    highlight recolours bars without reordering them. `shares_only`: the bars are the
    shares (a student's anonymous peers carry no amounts)."""
    column = _share(by) if shares_only else _column(by)
    if users.empty or not users[column].sum():
        return _empty()
    ordered = users.set_index("user").loc[list(reversed(user_order(users, by, column)))].reset_index()
    share = ordered[f"{_share(by)}"]
    names = ordered["user"].tolist()
    colors = [ACCENT if user == highlight else (BASE if highlight is None else _dim(BASE)) for user in names]
    if shares_only:
        texts = [fmt.percent(s, digits=0) for s in share]
        hovers = texts
    else:
        value_text = [fmt.usd(v) if by == "spend" else fmt.compact(v) for v in ordered[column]]
        texts = [f"{v} · {fmt.percent(s)}" for v, s in zip(value_text, share, strict=True)]
        hovers = [_hover_value(by, v) for v in ordered[column]]
    bars = {
        "type": "bar",
        "y": names,
        "x": _values(ordered[column]),
        "orientation": "h",
        "marker": {"color": colors},
        "text": texts,
        "textposition": "outside",
        "cliponaxis": False,
        # the real identity: what a click selects (panels.toggled_highlight); none for the
        # row of folded names ("other 99,980": queries/setup/views.sql kept_names)
        "customdata": [
            "" if "folded" in ordered and not fmt.missing(folded) else name
            for name, folded in zip(names, ordered.get("folded", [None] * len(names)), strict=True)
        ],
        "hovertext": [
            f"{html(name)} · {t(f'measure.{by}')}: {h}" for name, h in zip(names, hovers, strict=True)
        ],
        "hovertemplate": "%{hovertext}<extra></extra>",
    }
    layout = {
        "xaxis": {
            "showticklabels": False,
            "showgrid": False,
            "zeroline": False,
            "range": [0, float(ordered[column].max()) * 1.35],
        },
        "yaxis": {"automargin": True, **categories(names)},
    }
    # sized to its bars: one person's bar drawn over 320 px read as a wall, not a share
    return _figure([bars], layout, height=USER_ROW * len(ordered) + USER_FRAME, legend=False)


# the clients' colours in the users' bars split by client, busiest client first
CLIENT_PALETTE = ("#5B8DEF", "#F2A541", "#3BB38C", "#C86FC9", "#E4572E", "#2BB5C9", "#B7A04B", "#8C9BB0")


@shared
def user_client_bars(
    users: pd.DataFrame,
    matrix: pd.DataFrame,
    by: str,
    highlight: str | None = None,
    clients: Sequence[str] | None = None,
) -> go.Figure:
    """The users' bars split by client: a stacked segment per client in that client's
    colour (in `clients`' order, the Clients chart's), the users top to bottom as in
    user_bars, each labelled with its total and share; who used which tool without a
    click. A click still selects the bar's user (customdata); with a highlight, the
    others' segments are dimmed."""
    column = _column(by)
    if users.empty or not users[column].sum() or matrix.empty:
        return _empty()
    names = list(reversed(user_order(users, by, column)))
    ordered = users.set_index("user").loc[names]
    present = set(matrix["client"].dropna())
    listed = [c for c in (clients or ()) if c in present]
    order = listed + sorted(c for c in present if c not in set(listed))
    cells = matrix.pivot_table(index="user", columns="client", values=column, aggfunc="sum").reindex(
        index=names, columns=order
    )
    clickable = [
        "" if "folded" in ordered and not fmt.missing(folded) else name
        for name, folded in zip(names, ordered.get("folded", pd.Series([None] * len(names))), strict=True)
    ]
    opacity = [1.0 if highlight is None or name == highlight else DIMMED for name in names]
    traces: list[dict[str, Any]] = []
    for index, client in enumerate(order):
        part = cells[client].fillna(0)
        traces.append(
            {
                "type": "bar",
                "y": names,
                "x": _values(part),
                "orientation": "h",
                "name": label(client),
                "marker": {"color": CLIENT_PALETTE[index % len(CLIENT_PALETTE)], "opacity": opacity},
                "customdata": clickable,
                "hovertext": [
                    f"{html(name)} · {label(client)}: {_hover_value(by, v)}"
                    for name, v in zip(names, part, strict=True)
                ],
                "hovertemplate": "%{hovertext}<extra></extra>",
            }
        )
    totals = ordered[column].astype(float)
    # a user the grid folds into its "other" row (it keeps fewer people than the bars):
    # the part not split by client, in grey, so that every bar keeps its whole length
    rest = (totals - cells.fillna(0).sum(axis=1)).clip(lower=0)
    if float(rest.sum()) > float(totals.sum()) * 1e-9:
        traces.append(
            {
                "type": "bar",
                "y": names,
                "x": _values(rest),
                "orientation": "h",
                "name": t("users.not_split"),
                "marker": {"color": "#8C9BB0", "opacity": opacity},
                "customdata": clickable,
                "hovertext": [
                    f"{html(name)} · {t('users.not_split')}: {_hover_value(by, v)}"
                    for name, v in zip(names, rest, strict=True)
                ],
                "hovertemplate": "%{hovertext}<extra></extra>",
            }
        )
    value_text = [fmt.usd(v) if by == "spend" else fmt.compact(v) for v in totals]
    traces.append(  # each bar's total and share after its end, as user_bars writes them
        {
            "type": "scatter",
            "mode": "text",
            "y": names,
            "x": _values(totals),
            "text": [f"{v} · {fmt.percent(s)}" for v, s in zip(value_text, ordered[_share(by)], strict=True)],
            "textposition": "middle right",
            "hoverinfo": "skip",
            "showlegend": False,
            "cliponaxis": False,
        }
    )
    layout = {
        "barmode": "stack",
        "xaxis": {
            "showticklabels": False,
            "showgrid": False,
            "zeroline": False,
            "range": [0, float(totals.max()) * 1.35],
        },
        "yaxis": {"automargin": True, **categories(names)},
        "margin": {"t": 48},  # the clients' legend above the bars
    }
    return _figure(traces, layout, height=USER_ROW * len(names) + USER_FRAME + 40)


def category_order(frame: pd.DataFrame, category: str) -> list[str]:
    """A breakdown's names as its bars stand, top to bottom: most requests first, ties by
    name. The user-by-client grid's columns follow the Clients chart so."""
    ordered = frame.sort_values(["requests", category], ascending=[False, True])
    return ordered[category].tolist()


def client_order(clients: pd.DataFrame) -> list[str]:
    return category_order(clients, "client") if not clients.empty else []


@shared
def user_order(users: pd.DataFrame, by: str, column: str | None = None) -> list[str]:
    """The users as their bars stand, top to bottom: most first, ties by name. The
    user-by-client grid lists them the same way."""
    ordered = users.sort_values([column or _column(by), "user"], ascending=[False, True])
    return [str(user) for user in ordered["user"]]


def client_matrix(
    matrix: pd.DataFrame,
    highlight: str | None = None,
    order: Sequence[str] | None = None,
    clients: Sequence[str] | None = None,
) -> go.Figure:
    """Requests per user and client as a heatmap with its colour scale; users top to
    bottom in `order` (the users' bars), clients left to right in `clients` (the Clients
    chart's order, busiest first), the highlighted user's row outlined. A person who never
    used a client has a blank cell there, not the scale's palest colour."""
    if matrix.empty:
        return _empty()
    grid = matrix.pivot_table(index="user", columns="client", values="requests", aggfunc="sum")
    listed = [client for client in (clients or ()) if client in grid.columns]
    grid = grid[listed + sorted(c for c in grid.columns if c not in set(listed))]
    cells: dict[Any, dict[Any, Any]] = (
        matrix.groupby(["user", "client"])[["requests", "total_tokens", "spend_usd"]].sum().to_dict("index")
    )
    known = [user for user in (order or ()) if user in grid.index]
    rest = sorted(user for user in grid.index if user not in set(known))
    grid = grid.loc[list(reversed(known + rest))]  # a heatmap's first row is drawn at the bottom
    heatmap = {
        "type": "heatmap",
        "z": [[None if pd.isna(v) else float(v) for v in row] for row in grid.to_numpy()],
        "hoverongaps": False,
        "x": list(grid.columns),
        "y": list(grid.index),
        "colorscale": [[0, "rgba(91,141,239,0.15)"], [1, BASE]],  # a few requests still show
        "showscale": True,
        "colorbar": {
            "title": {"text": t("measure.requests")},
            "thickness": 12,
            **_count_ticks(grid.max().max()),
        },
        "text": [[f"{html(user)} · {html(client)}" for client in grid.columns] for user in grid.index],
        "customdata": [[_matrix_cell(cells, user, client) for client in grid.columns] for user in grid.index],
        "hovertemplate": "%{text}<br>%{customdata}<extra></extra>",
    }
    layout: dict[str, Any] = {
        "xaxis": categories(list(grid.columns)),
        "yaxis": {"automargin": True, **categories(list(grid.index))},
    }
    if highlight is not None and highlight in grid.index:
        row = list(grid.index).index(highlight)
        layout["shapes"] = [
            {
                "type": "rect",
                "x0": -0.5,
                "x1": len(grid.columns) - 0.5,
                "y0": row - 0.5,
                "y1": row + 0.5,
                "line": {"color": ACCENT, "width": 3},
            }
        ]
    return _figure([heatmap], layout, height=MATRIX_ROW * len(grid) + MATRIX_FRAME, legend=False)


def _matrix_cell(cells: dict[Any, dict[Any, Any]], user: str, client: str) -> str:
    """A cell's figures for its hover: requests, tokens and spend."""
    cell = cells.get((user, client))
    if cell is None:
        return plain("matrix.none")
    return plain(
        "matrix.cell",
        requests=fmt.count(cell["requests"]),
        tokens=fmt.compact(cell["total_tokens"]),
        spend=fmt.usd(cell["spend_usd"]),
    )


def sparkline(series: pd.DataFrame, column: str, *, unfinished: bool = False) -> list[float]:
    """The values a card's sparkline draws: amounts with empty buckets as 0; rates and
    latencies only where there were requests (an empty hour has no success rate).
    `unfinished`: the last bucket is today's (or this hour's) so far, left out: a card's
    line plunged at its end every morning."""
    if unfinished:
        series = series.iloc[:-1]
    if series.empty:
        return []
    values = series[column]
    values = values.dropna() if column.endswith(("_rate", "_ms")) else values.fillna(0)
    return [float(v) for v in values]


def _accent_line(mine: pd.DataFrame, column: str, who: str, hover: str) -> dict[str, Any]:
    return {
        "type": "scatter",
        "x": _values(mine["bucket"]),
        "y": _values(mine[column]),
        "name": label(who),
        "mode": "lines+markers",
        "line": {"color": ACCENT, "width": 3},
        "marker": {"size": 6},
        "hovertemplate": hover + "<extra>%{fullData.name}</extra>",
    }


DAY_MS = 86_400_000
BUCKET_MS = {"hour": 3_600_000, "day": DAY_MS}


class Span(NamedTuple):
    """A page's range as its time charts draw it: local, zone-less times (the buckets are
    written so) as text, and the buckets' size ("hour" or "day"). Every time chart of a
    page covers the whole span, whenever its first value falls, each bucket drawn across
    its own hour or day: bars fill their bucket and lines' points sit over the bars."""

    start: str
    end: str
    bucket: str


def _periodic(span: Span | None) -> dict[str, Any]:
    """A time trace's marks at the middle of their bucket (Plotly's period positioning): a
    bar centred on its bucket's first instant stuck out half a bucket before the range."""
    if span is None:
        return {}
    return {"xperiod": BUCKET_MS[span.bucket], "xperiodalignment": "middle"}


def _time_axis(buckets: pd.Series, span: Span | None, labels: int) -> dict[str, Any]:
    """A time chart's x axis over the page's `span` (or its buckets), with at most about
    `labels` date labels (see DATE_LABELS)."""
    covers = None
    if span is not None:
        start, end = pd.Timestamp(span.start), pd.Timestamp(span.end)
        covers = (start, math.ceil((end - start) / pd.Timedelta(days=1)))
    axis = _date_axis(buckets, labels, covers)
    if span is not None:
        axis |= {"range": [span.start, str(_bucket_end(span))], "autorange": False}
    return axis


def _bucket_end(span: Span) -> pd.Timestamp:
    """The end of the range's last bucket: a range that ends now ends inside today's (or
    this hour's) bucket, whose mark sits at the bucket's middle, past the range's end; the
    axis runs to the bucket's end so that the mark, and the line to it, stay on the chart."""
    return pd.Timestamp(span.end).ceil("D" if span.bucket == "day" else "h")


def unfinished(span: Span | None) -> bool:
    """Whether the range ends inside its last bucket (today's, or this hour's): that
    bucket counts only the requests so far."""
    return span is not None and _bucket_end(span) > pd.Timestamp(span.end)


def _not_yet(span: Span | None) -> list[dict[str, Any]]:
    """The part of the last bucket still to come, shaded and labelled "today so far" (or
    "this hour so far"): its bar or point counts only the requests so far, and reads as a
    partial bucket rather than a fall."""
    if span is None or not unfinished(span):
        return []
    return [
        {
            "label": {
                "text": t("chart.so_far.day" if span.bucket == "day" else "chart.so_far.hour"),
                # upright along the shade: across it, a late hour's narrow shade cut it off
                "textangle": -90,
                "textposition": "middle center",
                "font": {"size": 11, "color": "rgba(128,128,128,0.95)"},
            },
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": span.end,
            "x1": str(_bucket_end(span)),
            "y0": 0,
            "y1": 1,
            "fillcolor": "rgba(128,128,128,0.12)",
            "line": {"width": 0},
            "layer": "below",
        }
    ]


RATE_TICKS = [0.0, 0.25, 0.5, 0.75, 1.0]


def _date_axis(
    buckets: pd.Series, labels: int, covers: tuple[pd.Timestamp, int] | None = None
) -> dict[str, Any]:
    """The time axis's dates in the session's language: "Dec 3" (Korean "12월 3일"), 24-hour
    "15:00" below a day, "2026년 12월 3일 15:00" in the hover; always level, and at most
    about `labels` of them over the axis (`covers`: its first midnight and how many days it
    covers; else the buckets').

    Plotly turns labels that would overlap on their side (vertical in the Prompt caching
    chart at 1280 px): fewer labels, each read level, instead. Daily buckets over a few days
    get a tick every day or every few days: Plotly would tick every 12 hours, "00:00"
    under each day."""
    day_ms = DAY_MS
    stops = [
        # Plotly takes the first stop whose range holds the tick step, ends included: a
        # step of one day must not fall in the hours' stop ("3일 00:00")
        {"dtickrange": [None, day_ms - 1], "value": t("axis.date.hour")},
        {"dtickrange": [day_ms, "M1"], "value": t("axis.date.day")},
        {"dtickrange": ["M1", "M12"], "value": t("axis.date.month")},
        {"dtickrange": ["M12", None], "value": t("axis.date.year")},
    ]
    times = pd.to_datetime(buckets)
    daily = len(times) > 1 and bool(((times.dt.hour == 0) & (times.dt.minute == 0)).all())
    axis: dict[str, Any] = {
        "tickformatstops": stops,
        "hoverformat": t("axis.date.hover_day" if daily else "axis.date.hover"),
        "tickangle": 0,
    }
    start, count = covers or (times.min().normalize(), times.nunique())
    if daily and count <= DAILY_TICKS:
        axis |= _day_ticks(start, count, labels)
    else:  # Plotly's own step, under `labels` ticks: from a day up (there are more days than labels)
        axis["nticks"] = labels
    return axis


def _day_ticks(start: pd.Timestamp, days: int, labels: int) -> dict[str, Any]:
    """A tick every day or every few days, at most `labels`, on the midnights inside the
    axis and centred among them: a step of days from Plotly's own start (2000-01-01) left
    one label on a narrow chart, or one half off its edge."""
    step = math.ceil(days / labels)
    inside = days - 1  # the midnights between the first and the end
    if inside < 1:
        return {"dtick": DAY_MS * step}
    ticks = (inside - 1) // step + 1
    offset = 1 + (inside - 1 - (ticks - 1) * step) // 2
    return {"dtick": DAY_MS * step, "tick0": str(start + pd.Timedelta(days=offset))}


DAILY_TICKS = 10  # up to this many days, ticks on chosen days; beyond, Plotly's own step (a day or more)
# The most date labels a time chart carries: its plot's width on a 1280 px screen (the
# narrowest the README promises; measured in Chromium) over 64 px, a label ("11월 29일" is
# 50 px) and the space between two.
DATE_LABELS = {"cache": 2, "wide": 5, "half": 4, "page": 10}  # 136, 355, 276 and 717 px


def _value_axis(top: Any, unit: Unit, title: str) -> dict[str, Any]:
    """A value axis from 0 with its title and the page's own tick labels (format.ticks):
    whole numbers on a count axis, 만/억 in Korean, seconds above 1,000 ms."""
    values, texts = fmt.ticks(top, unit)
    return {
        "title": {"text": title},
        "tickmode": "array",
        "tickvals": values,
        "ticktext": texts,
        "range": [0, values[-1] * 1.04],
    }


def _count_ticks(top: Any) -> dict[str, Any]:
    """Whole-number ticks for a count's colour scale, as format.ticks writes them (1만)."""
    values, texts = fmt.ticks(top, "count")
    return {"tickmode": "array", "tickvals": values, "ticktext": texts}


def _unit(column: str) -> Unit:
    """A node line's unit, by the column's name (queries name them so)."""
    if column.endswith("_ms"):
        return "ms"
    if "_tps" in column:
        return "tokens_per_s"
    return "ratio" if column.endswith(("_rate", "_share")) else "count"


def _hover_value(measure: str, value: Any) -> str:
    """A measure in a tooltip as the tables write it: $0.0650, 30,692."""
    return fmt.usd(value) if measure == "spend" else fmt.count(value)


def _column(measure: str) -> str:
    return {"spend": "spend_usd", "tokens": "total_tokens", "requests": "requests"}[measure]


def _share(measure: str) -> str:
    return {"spend": "spend_share", "tokens": "tokens_share", "requests": "requests_share"}[measure]


def categories(values: Sequence[Any]) -> dict[str, Any]:
    """A category axis that keeps each real value (distinct bars, what a click selects)
    but shows it short and escaped: Plotly reads tags in tick labels, and a 100 KB name
    would squeeze the chart. Two names that look alike shortened stay two bars."""
    return {"tickmode": "array", "tickvals": list(values), "ticktext": [label(v) for v in values]}


def _dim(color: str) -> str:
    red, green, blue = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{DIMMED})"


# --- the nodes page -------------------------------------------------------------------------

NODE_PALETTE = ("#5B8DEF", "#F2A541", "#3BB38C", "#C86FC9", "#E4572E", "#2BB5C9", "#8C9BB0", "#B7A04B")


def node_colors(nodes: Sequence[str]) -> dict[str, str]:
    """The same colour for a node in every chart of the page."""
    return {node: NODE_PALETTE[i % len(NODE_PALETTE)] for i, node in enumerate(sorted(set(nodes)))}


@shared
def node_lines(
    frame: pd.DataFrame,
    column: str,
    axis: str,
    mine: pd.DataFrame | None = None,
    who: str | None = None,
    *,
    x: str = "bucket",
    hover: str = "%{y:,.1f}",
    span: Span | None = None,
    series: str = "node",
) -> go.Figure:
    """One line per GPU node (or per value of `series`) of `column` over `x`; the
    highlighted user's own values on each node as accent dots. A `_ms` or rate column's
    hover is written by format.py (11.7 s, 61.0 %), not by `hover`. `span`: the page's
    range, when `x` is the time; an `x` of text (prompt bands) is a category axis in the
    frame's order."""
    if frame.empty or frame[column].dropna().empty:
        return _empty()
    periodic = _periodic(span) if x == "bucket" else {}
    colors = node_colors(frame[series].tolist())
    unit = _unit(column)
    if unit in ("ms", "ratio"):  # 11.7 s, as the cards and tables write it; d3 formats cannot
        hover = "%{hovertext}"
    traces: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "x": _values(rows[x]),
            "y": _values(rows[column]),
            "name": label(node),
            "mode": "lines+markers",
            "line": {"color": colors[str(node)], "width": 2},
            "marker": {"size": 5},
            "opacity": DIMMED + 0.3 if who is not None else 1.0,
            "hovertext": [fmt.by_unit(v, unit) for v in rows[column]] if unit in ("ms", "ratio") else None,
            "hovertemplate": hover + "<extra>%{fullData.name}</extra>",
            "connectgaps": False,  # a bucket without the measure is a gap, not a slope
            **periodic,
        }
        for node, rows in frame.groupby(series, sort=True)
    ]
    if who is not None and mine is not None and not mine.empty and not mine[column].dropna().empty:
        traces.append(
            {
                "type": "scatter",
                "x": _values(mine[x]),
                "y": _values(mine[column]),
                "name": label(who),
                "mode": "markers",
                "marker": {"color": ACCENT, "size": 10, "symbol": "diamond"},
                "customdata": [html(node) for node in mine["node"]],
                "hovertext": [fmt.by_unit(v, unit) for v in mine[column]]
                if unit in ("ms", "ratio")
                else None,
                "hovertemplate": hover + " (%{customdata})<extra>%{fullData.name}</extra>",
                **periodic,
            }
        )
    shown = [frame] + ([mine] if who is not None and mine is not None and not mine.empty else [])
    tallest = max(part[column].max() for part in shown)
    if x == "bucket":
        x_axis = _time_axis(frame[x], span, DATE_LABELS["half"])
    elif not pd.api.types.is_numeric_dtype(frame[x]):
        x_axis = categories(list(dict.fromkeys(frame[x]))) | {"title": {"text": t(f"axis.{x}")}}
    else:
        x_axis = _value_axis(max(part[x].max() for part in shown), "count", t(f"axis.{x}"))
    y_axis = _value_axis(tallest, unit, axis) if unit != "ratio" else _rate_axis(axis)
    shapes = _not_yet(span) if x == "bucket" else []
    return _figure(traces, {"hovermode": "closest", "yaxis": y_axis, "xaxis": x_axis, "shapes": shapes})


def _rate_axis(title: str) -> dict[str, Any]:
    """A 0-100 % axis, its ticks as the cards write a share."""
    return {
        "title": {"text": title},
        "range": [0, 1.04],
        "tickmode": "array",
        "tickvals": RATE_TICKS,
        "ticktext": [fmt.percent(v, digits=0) for v in RATE_TICKS],
    }


@shared
def node_shares(shares: pd.DataFrame, span: Span | None = None) -> go.Figure:
    """Each node's share of the requests per bucket (node_share_by_bucket.sql), a line per
    node, and a cross on a node's line where a tenth or more of its requests failed
    (`troubled`): where a node went down and the others took over."""
    lines = node_lines(shares, "requests_share", t("axis.requests_share"), span=span)
    failed = shares[shares["troubled"].fillna(False).astype(bool)]
    if failed.empty or not lines.data:
        return lines
    base = lines.to_dict()  # a shared figure is never changed: a new one from its parts
    crosses = {
        "type": "scatter",
        "x": _values(failed["bucket"]),
        "y": _values(failed["requests_share"].fillna(0)),
        "name": t("series.failed"),
        "mode": "markers",
        "marker": {"color": FAILURE, "size": 9, "symbol": "x"},
        "customdata": [
            [html(node), fmt.count(n)] for node, n in zip(failed["node"], failed["failures"], strict=True)
        ],
        "hovertemplate": plain("nodes.failed_hover", node="%{customdata[0]}", n="%{customdata[1]}")
        + "<extra></extra>",
        **_periodic(span),
    }
    return _figure([*base["data"], crosses], base["layout"])


@shared
def failures_over_time(failures: pd.DataFrame, span: Span | None = None) -> go.Figure:
    """Failed requests per bucket, stacked by error class; the node in the hover text."""
    if failures.empty:
        return _empty()
    classes = sorted(failures["error_class"].unique())
    palette = (FAILURE, "#F2A541", "#C86FC9", "#8C9BB0", "#2BB5C9", "#B7A04B")
    traces = []
    for i, error_class in enumerate(classes):
        rows = failures[failures["error_class"] == error_class]
        traces.append(
            {
                "type": "bar",
                "x": _values(rows["bucket"]),
                "y": _values(rows["failures"]),
                "name": t("failures.unknown") if error_class == "unknown" else label(error_class),
                "marker": {"color": palette[i % len(palette)]},
                "customdata": [html(node) for node in rows["node"]],
                "hovertemplate": plain("hover.failures_on", value="%{y:,}", node="%{customdata}")
                + "<extra>%{fullData.name}</extra>",
                **_periodic(span),
            }
        )
    layout = {
        "barmode": "stack",
        "hovermode": "closest",
        "yaxis": _value_axis(failures.groupby("bucket")["failures"].sum().max(), "count", t("axis.failures")),
        "xaxis": _time_axis(failures["bucket"], span, DATE_LABELS["page"]),
        "shapes": _not_yet(span),
    }
    return _figure(traces, layout)
