"""A query's cursor on a snapshot: the rollups of the days its window covers whole, the
requests of the others (kept in memory or read from their files), the Nodes page's
partials, and the filters set as session variables; the named SQL run on it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from contract.rollups import SERIES_SCHEMA
from queries import day_cache, serving, snapshot
from queries.filters import Filters
from queries.loaded import _Snapshot
from queries.node_partials import NodePartials
from queries.shared import Shared
from queries.sql_files import Reads, days_read, load_sql, with_defaults
from queries.window import DAY, Window, empty_day, plan, query_for, window


class Cursors(NodePartials):
    """StoreReader's cursors, on the snapshot it is given."""

    store: Path
    zone: str
    _split_months: frozenset[dt.date]
    _days: day_cache.DayCache
    _older_days: Shared[pa.Table | None]

    def _query(self, snap: _Snapshot, name: str, filters: Filters, params: Mapping[str, Any]) -> pd.DataFrame:
        """`params` are bound by name, but for `edges`, the edges of the prompt bands, which
        the cursor holds as the variable `prompt_edges` (the Nodes page's partials are cut
        by them: queries/serving.py)."""
        sql = load_sql(query_for(name, filters, snap.series_zone))
        bound = dict(params)
        edges = tuple(bound.pop("edges", serving.PROMPT_BANDS))
        with self._cursor(snap, filters, days_read(sql, plan(filters, snap.series_zone)), edges=edges) as cur:
            return cur.execute(sql, with_defaults(sql, bound) or None).df()

    @contextmanager
    def _cursor(
        self,
        snap: _Snapshot,
        filters: Filters,
        reads: Reads = "all",
        *,
        edges: tuple[int, ...] = serving.PROMPT_BANDS,
    ) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of its own (DuckDB runs one query at a time per cursor) with the
        filters and the day files of their window set; `reads` says which days' single
        requests the query reads (days_read), so that no others are loaded, and whether
        the Nodes page's partials answer for the whole days."""
        assert filters.start is not None and filters.end is not None  # resolved
        days = window(snap.days, filters.start, filters.end)
        whole = self._whole_days(snap, days)
        planned = plan(filters, snap.series_zone)
        partials = reads == "edges" and planned["nodes"]
        spans = serving.covered(filters.start, filters.end) if partials else []
        if spans:
            tables = self._window_partials(snap, spans, filters.tz, edges=edges)
            span = (spans[0][0], spans[-1][1])
        else:  # the raw spans are the whole range
            tables, span = serving.empty_tables(), (filters.end, filters.end)
        listed = {"all": days.days, "edges": days.edge_reach, "none": []}[reads]
        if spans and (spans[0][0], spans[-1][1]) == (filters.start, filters.end):
            listed = []  # the partials answer for the whole range: no request to read
        with self._lock:
            cur = snap.con.cursor()
        try:
            cur.register("rollup_rows", snap.rollup_rows)
            cur.register("window_rollups", pa.concat_tables(whole) if whole else snap.rollup_rows.slice(0, 0))
            series = [t for day, t in snap.day_series.items() if days.whole_first <= day < days.whole_stop]
            cur.register("window_series", pa.concat_tables(series) if series else SERIES_SCHEMA.empty_table())
            for name, table in tables.items():
                cur.register(serving.PARTIAL_TABLES[name], table)
            for name, some in (("window", listed), ("edge", days.edges)):
                # the Nodes page's partials leave it minutes of requests at each end: read
                # from the files, rather than days kept in memory for them
                cached, on_disk = (
                    ([], [path for _, path in some])
                    if partials and name == "window"
                    else self._days.split(some)
                )
                cur.register(
                    f"{name}_cached", pa.concat_tables(cached) if cached else day_cache.SCHEMA.empty_table()
                )
                files = [str(empty_day()), *(str(path) for path in on_disk)]
                cur.execute(f"SET VARIABLE {name}_files = $files", {"files": files})
            cur.execute("SET VARIABLE filters = $filters", {"filters": filters.variable()})
            cur.execute("SET VARIABLE plan = $plan", {"plan": planned})
            cur.execute("SET VARIABLE prompt_edges = $edges", {"edges": list(edges)})
            cur.execute("SET VARIABLE whole = $whole", {"whole": {"start": span[0], "stop": span[1]}})
            yield cur
        finally:
            cur.close()

    def _whole_days(self, snap: _Snapshot, days: Window) -> list[pa.Table]:
        """The rollup rows of the days the window covers whole: the calendar months it
        covers whole from the months, the other days from each day's rollup (kept in
        memory if recent, else read from its file, through a small cache)."""
        tables = []
        day = days.whole_first
        while day < days.whole_stop:
            month = snapshot.month_of(day)
            following = (month + 31 * DAY).replace(day=1)
            if (
                day == month
                and following <= days.whole_stop
                and month in snap.months
                and month not in self._split_months
            ):
                tables.append(snap.months[month])
                day = following
                continue
            if day in snap.day_rollups:
                tables.append(snap.day_rollups[day])
            elif day in snap.fingerprints:
                rows = self._older_days.get((day, snap.fingerprints[day]), partial(self._read_rows, day))
                if rows is not None:
                    tables.append(rows)
            day += DAY
        return tables

    def _read_rows(self, day: dt.date) -> pa.Table | None:
        found = snapshot.day_rollup(self.store, day, None, self.zone)
        return found.rows if isinstance(found, snapshot.DayRollup) else None
