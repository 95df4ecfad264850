"""What every chart shares: the page's colours and sizes, the common layout and the empty
chart, a name's label and a category axis, a value axis, the measures' columns and the
dimmed colour of everything but the highlighted user."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from contract.measures import Unit
from dashboard import format as fmt
from dashboard.figures import margins
from dashboard.strings import t
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
# What Streamlit's chart sets in the layout of a chart whose points a click selects
# (st.plotly_chart(on_select=..., selection_mode="points")) where the layout has none,
# once the chart is drawn, and then draws the whole chart again (each click on the
# Overview, issue 30): in the figure from the start, it is drawn once
SELECTABLE = {"clickmode": "event+select", "hovermode": "closest", "dragmode": "pan"}


UNKNOWN = fmt.UNKNOWN
PLOT_WIDTH, WIDE_PLOT_WIDTH = margins.PLOT_WIDTH, margins.WIDE_PLOT_WIDTH  # the builders' `width`

# Streamlit's Plotly theme, as our own layout. Streamlit's theme lives in a template that
# its frontend makes anew whenever it mounts a chart, and Plotly recomputes a chart whose
# template is a new object: with it every chart was drawn twice per click (issue 30). The
# charts are drawn with theme=None (dashboard/panels/plot.py) and this layout instead; its
# colours are the light theme's, and the page's style sheet (plot.CHART_STYLE) turns
# exactly these into the dark theme's where the page is dark. Taken from Streamlit 1.67's
# theme as this app configures it (.streamlit/config.toml).
FONT = '"Source Sans", sans-serif'
TEXT, STRONG_TEXT, GRID = "#808495", "#262730", "#e6eaf1"
BACKGROUND, HOVER_BORDER = "#ffffff", "#dcd8d4"  # the page's, which Plotly's own defaults follow
LOOK: dict[str, Any] = {
    "font": {"family": FONT, "size": 12, "color": TEXT},
    "paper_bgcolor": BACKGROUND,
    "plot_bgcolor": BACKGROUND,
    "colorway": ["#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a"],
    "legend": {"font": {"size": 12, "color": STRONG_TEXT}, "bordercolor": "rgba(0,0,0,0)", "borderwidth": 0},
    "margin": {"pad": 8},
    "hoverlabel": {
        "bgcolor": BACKGROUND,
        "bordercolor": HOVER_BORDER,
        "font": {"family": FONT, "size": 12, "color": TEXT},
    },
    "xaxis": {
        "showgrid": False,
        "zeroline": False,
        "automargin": True,
        "gridcolor": GRID,
        "zerolinecolor": GRID,
        "ticks": "",  # no tick marks unless a chart asks (a tick colour alone would draw them)
        "tickcolor": GRID,
        "tickfont": {"size": 12, "color": TEXT},
        "title": {"font": {"size": 14, "color": TEXT}, "standoff": 20},
    },
    "yaxis": {
        "ticklabelposition": "outside",
        "automargin": True,
        "gridcolor": GRID,
        "zerolinecolor": GRID,
        "ticks": "",
        "tickcolor": GRID,
        "tickfont": {"size": 12, "color": TEXT},
        "title": {"font": {"size": 14, "color": TEXT}, "standoff": 24},
    },
}


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
    width: int = PLOT_WIDTH,
) -> go.Figure:
    """The figure of these traces, with the page's common layout under `layout`; `width`:
    the narrowest plot the page draws it in (margins.reserved).

    Traces and layout are plain dicts, checked by Plotly once in the tests
    (tests/test_dashboard_figures.py validates every builder's figure) rather than on every
    build: validating while building took 10 to 20 ms a figure, most of a page's time
    when a highlight or a new range needs new figures for fifty sessions."""
    common: dict[str, Any] = _merged(
        LOOK,
        {
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
        },
    )
    merged = _merged(common, layout or {})
    for key in merged:  # a second axis looks like the first (Streamlit's template did that)
        if key[:5] in ("xaxis", "yaxis") and key[5:]:
            merged[key] = _merged(LOOK[key[:5]], merged[key])
    # the labels' room reserved, so that Plotly draws the chart once, not twice (margins.py)
    merged["margin"] = {**merged["margin"], **margins.reserved(merged, traces, width)}
    return go.Figure(data=traces, layout=merged, _validate=False)


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
    """A column as Plotly takes it: times as a NumPy array (they travel as ISO strings),
    anything else as a list, a missing number as None.

    Numbers travel as JSON numbers, not as NumPy arrays (which plotly.py sends as base64
    typed arrays): the browser draws a chart once and then hands Plotly the same figure
    again (Streamlit re-applies its state on mounting), and `Plotly.react` takes a typed
    array for new data whatever `datarevision` says, so every chart was computed and drawn
    twice per click (issue 30; tests/test_chart_draws_browser.py)."""
    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        return column.to_numpy()
    if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        return [None if fmt.missing(value) else value for value in column.tolist()]
    return column.tolist()


def _has_data(frame: pd.DataFrame | None, column: str) -> bool:
    return frame is not None and not frame.empty and bool(frame[column].fillna(0).sum() > 0)


RATE_TICKS = [0.0, 0.25, 0.5, 0.75, 1.0]


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
