"""The panels the pages are made of: the filters sidebar (and the URL), freshness, cards,
charts, users and peers bars, adoption by client, budget bars, downloads. They only lay out: numbers come
from the query layer (through the session's scoped reader), figures from dashboard/figures/.
This package's face: what the pages import, from one module per concern."""

from __future__ import annotations

from dashboard.panels.adoption import adoption_panel
from dashboard.panels.budget import LEVEL_BARS, budget_bars
from dashboard.panels.charts import (
    ADDITIVE,
    CARDS,
    DELTA_COLORS,
    cards,
    chart_span,
    clients_panel,
    models_panel,
    time_charts,
)
from dashboard.panels.export import csv_bytes, csv_name, downloads
from dashboard.panels.loading import (
    HIGHLIGHT_QUERIES,
    PREFETCH_USERS,
    Page,
    computing,
    highlight_jobs,
    highlighting_jobs,
    load,
)
from dashboard.panels.sidebar import (
    FILTERS_DRAWN,
    WIDGETS,
    available_timezones,
    filters_sidebar,
    keep_page_widgets,
)
from dashboard.panels.status import freshness, store_status
from dashboard.panels.users import highlight_note, peers_panel, toggled_highlight, users_panel

__all__ = [
    "ADDITIVE",
    "CARDS",
    "DELTA_COLORS",
    "FILTERS_DRAWN",
    "HIGHLIGHT_QUERIES",
    "LEVEL_BARS",
    "PREFETCH_USERS",
    "WIDGETS",
    "Page",
    "adoption_panel",
    "available_timezones",
    "budget_bars",
    "cards",
    "chart_span",
    "clients_panel",
    "computing",
    "csv_bytes",
    "csv_name",
    "downloads",
    "filters_sidebar",
    "freshness",
    "highlight_jobs",
    "highlight_note",
    "highlighting_jobs",
    "keep_page_widgets",
    "load",
    "models_panel",
    "peers_panel",
    "store_status",
    "time_charts",
    "toggled_highlight",
    "users_panel",
]
