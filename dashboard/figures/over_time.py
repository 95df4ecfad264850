"""The Overview's charts over time (and My usage's): tokens by kind, requests by outcome,
prompt caching with its hit rate, each with the highlighted user's own line; and the
values of the cards' sparklines."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard import format as fmt
from dashboard.figures.common import (
    ACCENT,
    BASE,
    CACHE_LINE,
    DIMMED,
    FAILURE,
    KIND_COLORS,
    KINDS,
    PROMPT_AREAS,
    RATE_TICKS,
    _empty,
    _figure,
    _has_data,
    _value_axis,
    _values,
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

STACKED_PLOT_WIDTH = 380  # the tokens' and requests' plot at 1280 px: 3/5 of the page
CACHE_PLOT_WIDTH = 160  # the Prompt caching chart's plot at 1280 px, less its right axis's overlap


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
    # drawn in the wide column beside the caching chart or the nodes (panels/charts.py)
    return _figure(traces, layout, width=STACKED_PLOT_WIDTH)


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
    # drawn in the narrow column beside the tokens (panels/charts.py): its legend's rows
    return _figure(traces, layout, width=CACHE_PLOT_WIDTH)


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
