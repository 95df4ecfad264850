"""The time charts' x axis: a page's span (Span) and its buckets, each bucket's mark at
its middle, the date labels in the session's language, and the unfinished last bucket
shaded "today so far"."""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import pandas as pd

from dashboard.strings import t

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
    if daily:  # a step of days: never the hours' stop, whose two lines the labels' room left out
        stops = stops[1:]
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
