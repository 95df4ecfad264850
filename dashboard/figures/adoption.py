"""Adoption by client: a line per client of its active users per day, week or month, the
periods the range covers in part drawn open (a partial week has fewer people by itself)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard.figures.common import _empty, _figure, _value_axis, _values, label
from dashboard.figures.users import CLIENT_PALETTE
from dashboard.memo import shared
from dashboard.strings import t

PERIODS = ("day", "week", "month")


@shared
def active_users(frame: pd.DataFrame, period: str) -> go.Figure:
    """Each client's active users per `period` (client_adoption.sql); the folded clients
    as one line, named as the page names them."""
    rows = frame[frame["period"] == period]
    if rows.empty:
        return _empty()
    clients = list(dict.fromkeys(rows.sort_values("active_users", ascending=False)["client"]))
    traces: list[dict[str, Any]] = []
    for i, client in enumerate(clients):
        folded = client is None or pd.isna(client)
        own = rows[rows["client"].isna()] if folded else rows[rows["client"] == client]
        own = own.sort_values("period_start")
        traces.append(
            {
                "type": "scatter",
                "x": _values(own["period_start"]),
                "y": _values(own["active_users"]),
                "name": t("adoption.other") if folded else label(client),
                "mode": "lines+markers",
                "line": {"color": CLIENT_PALETTE[i % len(CLIENT_PALETTE)], "width": 2},
                "marker": {
                    "size": 7,
                    "symbol": ["circle" if whole else "circle-open" for whole in own["whole"]],
                },
                "hovertemplate": "%{y:,} " + t("adoption.people") + "<extra>%{fullData.name}</extra>",
            }
        )
    axis = _value_axis(float(rows["active_users"].max()), "count", t("adoption.axis"))
    return _figure(
        traces,
        {
            "hovermode": "x unified",
            "yaxis": axis,
            "xaxis": {"type": "date", "hoverformat": "%Y-%m-%d", "title": {"text": t(f"adoption.{period}")}},
        },
        height=260,
    )
