"""Pure figure builders: DataFrames (and the highlighted user's share of them) in,
Plotly figures out. No Streamlit here; the page lays them out. This package's face: the
builders and the constants the pages and tests use, from one module per kind of chart.

Highlight: when a user is highlighted, their part is drawn in the accent colour and
the rest dimmed: over time as an accent line over the dimmed chart, in the category
bars as an accent segment stacked under the dimmed rest, in the user bars as the one
accent bar among dimmed ones.

Each builder is `@shared`: built once per data, highlight and language, and the same
figure handed to every session (dashboard/memo.py); callers never change a figure.
"""

from __future__ import annotations

from dashboard.figures.adoption import active_users
from dashboard.figures.breakdowns import (
    LABEL_GAP_PX,
    LABEL_PX,
    SHARE_PANEL_PX,
    category_order,
    client_order,
    share_bars,
)
from dashboard.figures.common import (
    ACCENT,
    BACKGROUND,
    BAR_ROW,
    BASE,
    CACHE_LINE,
    DIMMED,
    FAILURE,
    FONT,
    GRID,
    HEIGHT,
    HOVER_BORDER,
    KIND_COLORS,
    KINDS,
    LOOK,
    MATRIX_FRAME,
    MATRIX_ROW,
    PLOT_WIDTH,
    PROMPT_AREAS,
    RATE_TICKS,
    SELECTABLE,
    SHARE_FRAME,
    STRONG_TEXT,
    TEXT,
    UNKNOWN,
    USER_FRAME,
    USER_ROW,
    WIDE_PLOT_WIDTH,
    categories,
    label,
)
from dashboard.figures.common import _dim as _dim  # the tests compare a dimmed bar's colour
from dashboard.figures.nodes import NODE_PALETTE, failures_over_time, node_colors, node_lines, node_shares
from dashboard.figures.over_time import cache_trend, requests_over_time, sparkline, tokens_over_time
from dashboard.figures.time_axis import BUCKET_MS, DAILY_TICKS, DATE_LABELS, DAY_MS, Span, unfinished
from dashboard.figures.users import CLIENT_PALETTE, client_matrix, user_bars, user_client_bars, user_order

__all__ = [
    "ACCENT",
    "BACKGROUND",
    "BAR_ROW",
    "BASE",
    "BUCKET_MS",
    "CACHE_LINE",
    "CLIENT_PALETTE",
    "DAILY_TICKS",
    "DATE_LABELS",
    "DAY_MS",
    "DIMMED",
    "FAILURE",
    "FONT",
    "GRID",
    "HEIGHT",
    "HOVER_BORDER",
    "KINDS",
    "KIND_COLORS",
    "LABEL_GAP_PX",
    "LABEL_PX",
    "LOOK",
    "MATRIX_FRAME",
    "MATRIX_ROW",
    "NODE_PALETTE",
    "PLOT_WIDTH",
    "PROMPT_AREAS",
    "RATE_TICKS",
    "SELECTABLE",
    "SHARE_FRAME",
    "SHARE_PANEL_PX",
    "STRONG_TEXT",
    "TEXT",
    "UNKNOWN",
    "USER_FRAME",
    "USER_ROW",
    "WIDE_PLOT_WIDTH",
    "Span",
    "active_users",
    "cache_trend",
    "categories",
    "category_order",
    "client_matrix",
    "client_order",
    "failures_over_time",
    "label",
    "node_colors",
    "node_lines",
    "node_shares",
    "requests_over_time",
    "share_bars",
    "sparkline",
    "tokens_over_time",
    "unfinished",
    "user_bars",
    "user_client_bars",
    "user_order",
]
