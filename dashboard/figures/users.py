"""The users' charts: their bars by a measure (or only shares, a student's anonymous
peers), the bars split by client, and the users-by-clients grid, all in the bars' order;
a click on a bar selects its user."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from dashboard import format as fmt
from dashboard.figures.common import (
    ACCENT,
    BASE,
    DIMMED,
    MATRIX_FRAME,
    MATRIX_ROW,
    SELECTABLE,
    USER_FRAME,
    USER_ROW,
    _column,
    _count_ticks,
    _dim,
    _empty,
    _figure,
    _hover_value,
    _share,
    _values,
    categories,
    label,
)
from dashboard.memo import shared
from dashboard.strings import plain, t
from dashboard.untrusted import html


@shared
def user_bars(
    users: pd.DataFrame,
    by: str,
    highlight: str | None = None,
    *,
    shares_only: bool = False,
    selectable: bool = False,
) -> go.Figure:
    """One horizontal bar per user, largest on top, labelled with the user's share; a
    click selects the bar's user (customdata). One trace, per-bar colours, so that the
    highlight recolours bars without reordering them. `shares_only`: the bars are the
    shares (a student's anonymous peers carry no amounts); `selectable`: drawn where a
    click on a bar selects it (SELECTABLE)."""
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
        "yaxis": {"automargin": True, "showgrid": False, "zeroline": False, **categories(names)},
        **(SELECTABLE if selectable else {}),
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
    *,
    selectable: bool = False,
) -> go.Figure:
    """The users' bars split by client: a stacked segment per client in that client's
    colour (in `clients`' order, the Clients chart's), the users top to bottom as in
    user_bars, each labelled with its total and share; who used which tool without a
    click. A click still selects the bar's user (customdata); with a highlight, the
    others' segments are dimmed. `selectable` as in user_bars."""
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
        "yaxis": {"automargin": True, "showgrid": False, "zeroline": False, **categories(names)},
        "margin": {"t": 48},  # the clients' legend above the bars
        **(SELECTABLE if selectable else {}),
    }
    return _figure(traces, layout, height=USER_ROW * len(names) + USER_FRAME + 40)


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
        "xaxis": {"ticks": "outside", **categories(list(grid.columns))},  # a heatmap's default
        "yaxis": {"automargin": True, "ticks": "outside", **categories(list(grid.index))},
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
