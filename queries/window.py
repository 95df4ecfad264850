"""Which days a query reads: the day files of its window, and which of those days its
rollups answer whole.

A window [start, end) of UTC instants covers some UTC days whole (their rollups answer
for them) and at most two in part, its edges (their requests are read from the day
files). Queries that need single requests (percentiles, requests in flight) read the day
files of every day of the window, and of the day before it: a request that started then
may still be running when the window begins.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pyarrow.parquet as pq

from contract.store import REQUESTS_FILE_SCHEMA
from queries.filters import Filters

DAY = dt.timedelta(days=1)


@cache
def empty_day() -> Path:
    """A day file with no requests, first in every list: a list is never empty (DuckDB
    refuses one), and every column of this version is there even when the window's files
    come from an older store that lacked one (it then reads as NULL)."""
    folder = Path(tempfile.mkdtemp(prefix="usage-reader-"))
    path = folder / "empty.parquet"
    pq.write_table(REQUESTS_FILE_SCHEMA.empty_table(), path)
    return path


@dataclass(frozen=True)
class Window:
    days: list[tuple[dt.date, Path]]  # the day files of [start, end), and of the day before
    edges: list[tuple[dt.date, Path]]  # those of the days [start, end) covers only in part
    whole_first: dt.date  # the days [whole_first, whole_stop) are covered whole
    whole_stop: dt.date

    @property
    def edge_reach(self) -> list[tuple[dt.date, Path]]:
        """The day files of the edges and of the days before them: every request that
        may be in flight during an edge."""
        edges = {day for day, _ in self.edges}
        return [(day, path) for day, path in self.days if day in edges or day + DAY in edges]


def window(days: Mapping[dt.date, Path], start: dt.datetime, end: dt.datetime) -> Window:
    """The files and whole days of [start, end) among the store's `days`."""
    start, end = start.astimezone(dt.UTC), end.astimezone(dt.UTC)
    first_day, last_day = start.date(), (end - dt.timedelta(microseconds=1)).date()
    whole_first = first_day if _midnight(first_day) == start else first_day + DAY
    whole_stop = end.date()  # exclusive: the day `end` falls on is whole only if end is its end
    whole_stop = max(whole_stop, whole_first)
    inside = [(day, days[day]) for day in sorted(d for d in days if first_day - DAY <= d <= last_day)]
    edges = [(day, path) for day, path in inside if day >= first_day and not whole_first <= day < whole_stop]
    return Window(inside, edges, whole_first, whole_stop)


def _midnight(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(), dt.UTC)


def plan(filters: Filters, series_zone: str | None) -> dict[str, bool]:
    """Which rollups can answer for `filters` (the session variable `plan`): the series
    (days by local date, status and latency bin) hold no person, key, model, node or
    client, so they answer only when none of those narrows the view; their local dates
    are those of one display zone, so daily buckets come from them only in that zone.
    The Nodes page's partials (queries/serving.py) hold no status either, and their
    local dates are days: they answer with no filter but the range, by day."""
    series = (
        not (filters.users or filters.models or filters.nodes or filters.clients)
        and filters.only_keys is None
    )
    days = series and filters.bucket_size == "day" and filters.tz == series_zone
    nodes = series and not filters.statuses and filters.bucket_size == "day"
    return {"series": series, "days": days, "nodes": nodes}


# a query, and the one that gives the same result from the series when the plan allows
BY_DAY = {"by_bucket": "by_bucket_days"}


def query_for(name: str, filters: Filters, series_zone: str | None) -> str:
    return BY_DAY[name] if name in BY_DAY and plan(filters, series_zone)["days"] else name
