"""The breakdown bars (GPU nodes, clients, models): a row per name, a panel per measure
side by side, each bar labelled with its share and the highlighted user's part stacked
first; and the order their rows stand in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard import format as fmt
from dashboard.figures.common import (
    ACCENT,
    BAR_ROW,
    BASE,
    HEIGHT,
    SHARE_FRAME,
    _column,
    _dim,
    _empty,
    _figure,
    _hover_value,
    _values,
    categories,
    label,
)
from dashboard.memo import shared
from dashboard.strings import t
from dashboard.untrusted import html


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
    layout: dict[str, Any] = {
        "barmode": "stack",
        "yaxis": {"automargin": True, "showgrid": False, "zeroline": False},  # bars' names: no lines
        "annotations": [],
    }
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


def category_order(frame: pd.DataFrame, category: str) -> list[str]:
    """A breakdown's names as its bars stand, top to bottom: most requests first, ties by
    name. The user-by-client grid's columns follow the Clients chart so."""
    ordered = frame.sort_values(["requests", category], ascending=[False, True])
    return ordered[category].tolist()


def client_order(clients: pd.DataFrame) -> list[str]:
    return category_order(clients, "client") if not clients.empty else []
