"""What every chart shares: the page's colours and sizes, the common layout and the empty
chart, a name's label and a category axis, a value axis, the measures' columns and the
dimmed colour of everything but the highlighted user."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from contract.measures import Unit
from dashboard import format as fmt
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
