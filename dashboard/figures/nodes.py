"""The Nodes page's charts: a line per GPU node (or model, or pair) over time or over a
category, the nodes' shares of the requests with their failures marked, and the failed
requests by error class; a node keeps its colour in every chart."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from contract.measures import Unit
from dashboard import format as fmt
from dashboard.figures.common import (
    ACCENT,
    DIMMED,
    FAILURE,
    PLOT_WIDTH,
    RATE_TICKS,
    _empty,
    _figure,
    _value_axis,
    _values,
    categories,
    label,
)
from dashboard.figures.time_axis import (
    DATE_LABELS,
    Span,
    _not_yet,
    _periodic,
    _time_axis,
)
from dashboard.memo import shared
from dashboard.strings import plain, t
from dashboard.untrusted import html


def _unit(column: str) -> Unit:
    """A node line's unit, by the column's name (queries name them so)."""
    if column.endswith("_ms"):
        return "ms"
    if "_tps" in column:
        return "tokens_per_s"
    return "ratio" if column.endswith(("_rate", "_share")) else "count"


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
    width: int = PLOT_WIDTH,
) -> go.Figure:
    """One line per GPU node (or per value of `series`) of `column` over `x`; the
    highlighted user's own values on each node as accent dots. A `_ms` or rate column's
    hover is written by format.py (11.7 s, 61.0 %), not by `hover`. `span`: the page's
    range, when `x` is the time; an `x` of text (prompt bands) is a category axis in the
    frame's order. `width`: the narrowest plot the page draws it in (its legend's rows)."""
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
    layout = {"hovermode": "closest", "yaxis": y_axis, "xaxis": x_axis, "shapes": shapes}
    return _figure(traces, layout, width=width)


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
def node_shares(shares: pd.DataFrame, span: Span | None = None, width: int = PLOT_WIDTH) -> go.Figure:
    """Each node's share of the requests per bucket (node_share_by_bucket.sql), a line per
    node, and a cross on a node's line where a tenth or more of its requests failed
    (`troubled`): where a node went down and the others took over."""
    lines = node_lines(shares, "requests_share", t("axis.requests_share"), span=span, width=width)
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
    return _figure([*base["data"], crosses], base["layout"], width=width)


@shared
def failures_over_time(
    failures: pd.DataFrame, span: Span | None = None, width: int = PLOT_WIDTH
) -> go.Figure:
    """Failed requests per bucket, stacked by error class; the node in the hover text.
    `width`: the narrowest plot the page draws it in (its legend's rows)."""
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
    return _figure(traces, layout, width=width)
