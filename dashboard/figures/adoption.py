"""Adoption by client: each client's active users per day, week or month as grouped bars
(bars of equal height stay side by side, where lines would hide each other), a client in
the same colour whatever the period, the periods the range covers in part drawn paler
(a partial week has fewer people by itself), and the periods named in the page's language."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard import format as fmt
from dashboard.figures.common import _empty, _figure, _value_axis, categories, label
from dashboard.figures.users import CLIENT_PALETTE
from dashboard.memo import shared
from dashboard.strings import t

PERIODS = ("day", "week", "month")
PARTIAL_OPACITY = 0.45


@shared
def active_users(frame: pd.DataFrame, period: str) -> go.Figure:
    """Each client's active users per `period` (client_adoption.sql); the folded clients
    as one series, named as the page names them, last."""
    rows = frame[frame["period"] == period]
    if rows.empty:
        return _empty()
    names = rows["client"].astype(object).where(rows["client"].notna(), None)
    # by name, the folded ones last: a client's colour is the same whatever the period
    every = frame["client"].astype(object).where(frame["client"].notna(), None)
    order = sorted(set(every), key=lambda c: (c is None, str(c)))
    clients = [c for c in order if c in set(names)]
    starts = sorted(pd.to_datetime(rows["period_start"]).dt.date.unique())
    this_year = max(starts).year
    x = [_period_label(day, period, this_year) for day in starts]
    whole = rows.assign(day=pd.to_datetime(rows["period_start"]).dt.date).groupby("day")["whole"].all()
    traces: list[dict[str, Any]] = []
    for client in clients:
        own = rows[names.isna()] if client is None else rows[names == client]
        values = dict(zip(pd.to_datetime(own["period_start"]).dt.date, own["active_users"], strict=True))
        colour = CLIENT_PALETTE[order.index(client) % len(CLIENT_PALETTE)]
        traces.append(
            {
                "type": "bar",
                "x": x,
                "y": [int(values.get(day, 0)) for day in starts],
                "name": t("adoption.other") if client is None else label(client),
                "marker": {
                    "color": colour,
                    "opacity": [1.0 if whole[day] else PARTIAL_OPACITY for day in starts],
                },
                "hovertemplate": "%{x}: %{y:,} " + t("adoption.people") + "<extra>%{fullData.name}</extra>",
            }
        )
    axis = _value_axis(float(rows["active_users"].max()), "count", t("adoption.axis"))
    return _figure(
        traces,
        {
            "barmode": "group",
            "hovermode": "closest",
            "yaxis": axis,
            "xaxis": categories(x) | {"type": "category", "title": {"text": t(f"adoption.{period}")}},
        },
        height=280,
    )


def _period_label(first: dt.date, period: str, this_year: int) -> str:
    """A day or a week by its first day ("Nov 2", "11월 2일"); a month by its first day too,
    as the page writes a date."""
    return fmt.day(first, this_year=this_year)
