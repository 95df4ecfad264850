"""Run the named SQL files of this folder over the store; DataFrames out.

    reader = StoreReader(store)
    reader.run("by_user", Filters.last(dt.timedelta(days=7)))

Every query reads the views of queries/setup/views.sql: `scoped_sums` and
`in_scope_sums` (the rollups, with single requests where the range covers a day in
part), `scoped` and `overlapping` (single requests, from the day files of the range),
`buckets` (the display buckets of the range), `keys_in_scope`, `users_in_scope` and the
ETL's tables, over a snapshot of the store (queries/snapshot.py) that is refreshed, day
by day, when the ETL changes the store. The filters and the window's day files are
session variables set on the query's own cursor; other parameters are bound by name. No
SQL is ever formatted.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import astuple, dataclass, replace
from functools import cache, partial
from pathlib import Path
from typing import Any, Literal, Protocol

import duckdb
import pandas as pd
import pyarrow as pa

from contract.rollups import SERIES_SCHEMA
from queries import day_cache, serving, snapshot
from queries.filters import Filters
from queries.shared import Shared
from queries.window import DAY, Window, empty_day, plan, query_for, window
from settings.config import DEFAULT_TIMEZONE, DashboardSettings
from settings.price_book import Price, boundaries

log = logging.getLogger("queries")

QUERY_DIR = Path(__file__).parent
RECHECK_S = 1.0  # how often to look for a newer store (a stat per day file: ~2 ms a year)
# the Nodes page's partials kept: a month at 10M requests a year takes 29 MB (1.0 MB a
# day, of which levels in flight 0.4 MB and prompt bands 0.3 MB)
PARTIALS_MB = 64
RETRY_FAILED_S = 60.0  # how long to wait before loading a store that failed to load again


class UnknownQuery(LookupError):
    pass


# a query of run_many: its name, filters, and (optionally) its other parameters
Job = tuple[str, Filters] | tuple[str, Filters, Mapping[str, Any]]


class Reader(Protocol):
    """What pages need from a reader: StoreReader, or the ScopedReader a session gets."""

    @property
    def last_error(self) -> str | None: ...

    def damaged(self) -> dict[str, str]: ...

    def run(self, name: str, filters: Filters | None = None, **params: Any) -> pd.DataFrame: ...

    def run_many(self, jobs: Mapping[str, Job]) -> dict[str, pd.DataFrame]: ...

    def prefetch(self, jobs: Mapping[str, Job]) -> None: ...

    def compare(self, name: str, filters: Filters, **params: Any) -> pd.DataFrame: ...

    def resolve(self, filters: Filters) -> Filters: ...


# a read of a view of single requests over the whole range (setup/views.sql)
_REQUEST_VIEWS = re.compile(r"\b(?:FROM|JOIN)\s+(?:in_scope|selected|scoped|overlapping|requests)\b", re.I)
# a read of the Nodes page's views (queries/serving.py)
_SERVING_VIEWS = re.compile(
    r"\b(?:flight_slots|failure_slots|serving_(?:perf|speed|levels|load|level_time|cache|bands|routing|quantiles))\b",
    re.I,
)
_COMMENT = re.compile(r"--[^\n]*")
_PARAMETER = re.compile(r"\$([a-z_]+)")
# how many names the breakdowns show, whom they always show, and (for the highlighted
# user's part of a page) which names the page shows: unless a caller says otherwise, the
# configuration's defaults, everyone ranked (setup/views.sql kept_names)
NAME_PARAMS: dict[str, Any] = {
    "top_names": DashboardSettings.top_names,
    "grid_names": DashboardSettings.grid_names,
    "filter_names": DashboardSettings.filter_names,
    "highlight": None,
    "shown": None,
}
Reads = Literal["all", "edges", "none"]


def days_read(sql: str, planned: Mapping[str, bool]) -> Reads:
    """Which days' single requests `sql` reads: of the whole window ("all": from a view
    of them, through the latency percentiles where the series may not answer, or through
    the Nodes page's views where its partials may not), only of the window's edges and
    the days before them (the Nodes page's views, the partials answering for the rest),
    or none."""
    sql = _COMMENT.sub("", sql)
    serving = bool(_SERVING_VIEWS.search(sql))
    if (
        _REQUEST_VIEWS.search(sql)
        or ("latency_quantile" in sql and not planned["series"])
        or (serving and not planned["nodes"])
    ):
        return "all"
    return "edges" if serving else "none"


def with_defaults(sql: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """`params` and, for those of NAME_PARAMS that `sql` reads and `params` lacks, their
    defaults (DuckDB takes no parameter a statement does not read)."""
    wanted = set(_PARAMETER.findall(_COMMENT.sub("", sql))) & NAME_PARAMS.keys()
    return {name: NAME_PARAMS[name] for name in wanted} | dict(params)


def query_names() -> list[str]:
    return sorted(p.stem for p in QUERY_DIR.glob("*.sql"))


@cache
def load_sql(name: str) -> str:
    if name not in query_names():  # names only: never a path to some other SQL file
        raise UnknownQuery(f"no query {name!r}; known: {', '.join(query_names())}")
    return (QUERY_DIR / f"{name}.sql").read_text(encoding="utf-8")


@dataclass(frozen=True)
class _Snapshot:
    con: duckdb.DuckDBPyConnection
    version: tuple[tuple[str, int, int], ...]
    first: dt.datetime | None  # oldest and newest request start in the store
    last: dt.datetime | None
    days: dict[dt.date, Path]  # the day files
    rollup_rows: pa.Table  # every month's rollup
    months: dict[dt.date, pa.Table]  # the same, by month (its first day)
    day_rollups: dict[dt.date, pa.Table]  # the recent days' rollups (snapshot.RECENT_DAYS)
    day_series: dict[dt.date, pa.Table]  # each day's series
    fingerprints: dict[dt.date, snapshot.Fingerprint]  # each day file's
    series_zone: str | None  # the zone of every day's series (None: not all the same)
    damaged: dict[str, str]  # store files that could not be read (left out) -> why


WARM_RESULTS = 200  # recent result sets answered again on each new snapshot
PREFETCH_BATCHES = 4  # prefetch() batches that may wait; more are dropped
WARM_FOR_S = 20.0  # at most this long, so that new data is never held back for long


class StoreReader:
    """Queries over one store, safe to share between threads (Streamlit sessions)."""

    def __init__(
        self,
        store: Path,
        *,
        share_results: bool = True,
        cache_mb: int = day_cache.DEFAULT_MB,
        zone: str = DEFAULT_TIMEZONE,
        prices: tuple[Price, ...] = (),
    ) -> None:
        """`share_results` False computes every result afresh (benchmarks of the engine);
        `cache_mb` is what the requests of recently read days may take in memory; `zone`
        is the lab's display zone (`dashboard.timezone`), whose daily series the ETL keeps;
        `prices` the price book's entries (none: nothing is priced at API prices)."""
        self.store = store
        self.zone = zone
        self.prices = prices
        # months in which a price changes (not on their first day): read per day, never
        # merged, so that each day is priced at its own price (setup/views.sql `priced`)
        self._split_months = frozenset(snapshot.month_of(d) for d in boundaries(prices) if d.day != 1)
        # A reader keeps thousands of small Arrow tables for hours; Arrow's default
        # allocator (mimalloc) held 40 % more memory than they take (300 MB at 10M
        # requests), the system's gives it back.
        pa.set_memory_pool(pa.system_memory_pool())
        self._days = day_cache.DayCache(cache_mb)
        # the Nodes page's partials of each span, and of each range (queries/serving.py)
        self._partials: Shared[serving.Partials] = Shared(
            max_entries=100_000, max_size=PARTIALS_MB * 2**20, size=lambda p: p.nbytes
        )
        self._merged_partials: Shared[dict[str, pa.Table]] = Shared(
            max_entries=16, size=lambda tables: sum(int(t.nbytes) for t in tables.values())
        )
        self._lock = threading.Lock()
        self._current: _Snapshot | None = None
        self._checked = 0.0
        self._loading = False
        self._failed: tuple[tuple[tuple[str, int, int], ...], float] | None = None  # version, retry at
        self.last_error: str | None = None  # why the newest store could not be loaded, if so
        self._rollups: dict[dt.date, snapshot.DayRollup] = {}  # kept from one snapshot to the next
        self._months: dict[dt.date, snapshot.MonthRollup] = {}  # likewise
        self._damaged: dict[str, snapshot.Damage] = {}  # likewise: files left out, by path
        # rollups of older days that a range covers whole but not their whole month
        self._older_days: Shared[pa.Table | None] = Shared(
            max_entries=10_000, max_size=32 * 2**20, size=lambda rows: int(rows.nbytes) if rows else 0
        )
        # every session's results, for as long as this snapshot serves
        self._results: Shared[pd.DataFrame] = Shared(
            max_entries=4_000 if share_results else 0,
            max_size=256 * 2**20,
            size=lambda frame: int(frame.memory_usage(index=True, deep=False).sum()),
            share=lambda frame: frame.copy(deep=False),  # copy-on-write: the shared frame never changes
        )
        # what sessions asked for lately, to answer again on a new snapshot before it serves
        self._recent: OrderedDict[str, tuple[str, Filters, dict[str, Any]]] = OrderedDict()
        self._recent_lock = threading.Lock()
        self._prefetching = 0  # batches of prefetch() waiting or running
        self._prefetch_newest = 0  # the newest batch's number

    def run(self, name: str, filters: Filters | None = None, **params: Any) -> pd.DataFrame:
        """The result of `<name>.sql` under `filters` (default: everything in scope)."""
        return self._run(self._snapshot(), name, filters or Filters(), params)

    def run_many(self, jobs: Mapping[str, Job]) -> dict[str, pd.DataFrame]:
        """Several queries at once, on a small shared thread pool, all on the same
        snapshot (a page never mixes two versions of the store). Each query leaves a core
        idle part of the time: a page of eight takes ~30 % less time on two cores."""
        snap = self._snapshot()
        futures = {
            key: _pool().submit(self._run, snap, job[0], job[1], job[2] if len(job) > 2 else {})
            for key, job in jobs.items()
        }
        return {key: future.result() for key, future in futures.items()}

    def prefetch(self, jobs: Mapping[str, Job]) -> None:
        """Compute `jobs` in the background, one after the other on one thread, for a click
        that may ask for them next (the highlighted parts of the users a page shows): into
        the shared results only, not into what each new snapshot answers again. The newest
        batch goes first: an older one stops where it is (its page has been left or
        changed: what it asks ahead is least likely to be asked). Nothing when results are
        not shared, or when PREFETCH_BATCHES batches already wait."""
        if not self._results.max_entries or not jobs:
            return
        with self._recent_lock:
            if self._prefetching >= PREFETCH_BATCHES:
                return
            self._prefetching += 1
            self._prefetch_newest += 1
            batch = self._prefetch_newest
        _prefetch_pool().submit(self._prefetch, self._snapshot(), dict(jobs), batch)

    def _prefetch(self, snap: _Snapshot, jobs: dict[str, Job], batch: int) -> None:
        try:
            for job in jobs.values():
                if snap is not self._current or batch != self._prefetch_newest:
                    return  # a newer store serves, or a newer page asks ahead
                self._run(snap, job[0], job[1], job[2] if len(job) > 2 else {}, remember=False)
        except Exception:  # a page asking for it will see and report the error
            log.warning("prefetching %d result sets failed", len(jobs), exc_info=True)
        finally:
            with self._recent_lock:
                self._prefetching -= 1

    def compare(self, name: str, filters: Filters, **params: Any) -> pd.DataFrame:
        """A one-row query for `filters` and for the period of equal length before it,
        as two rows with `period` = "current" and "previous" (for the cards' deltas)."""
        snap = self._snapshot()
        resolved = self._resolve(filters, snap)
        current = self._run(snap, name, resolved, params).assign(period="current")
        previous = self._run(snap, name, resolved.previous(), params).assign(period="previous")
        return pd.concat([current, previous], ignore_index=True)

    def resolve(self, filters: Filters) -> Filters:
        """`filters` with open range ends closed at the store's first and last request."""
        return self._resolve(filters, self._snapshot())

    def prepare_nodes(self, days: int = 30) -> None:
        """Compute the Nodes page's partials of the last `days` whole days in the lab's
        zone, in the background after start-up: the first view of that page otherwise
        waits for them (8 s for a month at 10M requests a year)."""
        try:
            snap = self._snapshot()
            if snap.last is None:
                return
            stop = dt.datetime.combine(snap.last.date(), dt.time(), dt.UTC)
            spans = serving.covered(stop - days * DAY, stop)
            edges = serving.PROMPT_BANDS
            self._partials_of(
                snap, self._partial_jobs(snap, spans, self.zone, edges=edges), self.zone, edges=edges
            )
        except Exception:  # the page computes them itself, and says what fails
            log.warning("could not prepare the Nodes page's partials", exc_info=True)

    def damaged(self) -> dict[str, str]:
        """Store files the current snapshot left out, because they could not be read, and
        why: the pages show the rest and name these (`python -m etl doctor` says more)."""
        return self._snapshot().damaged

    def version(self) -> tuple[tuple[str, int, int], ...]:
        """Identifies the store's content: a cache keyed on it is never stale."""
        return self._snapshot().version

    def _run(
        self,
        snap: _Snapshot,
        name: str,
        filters: Filters,
        params: Mapping[str, Any],
        *,
        remember: bool = True,
    ) -> pd.DataFrame:
        """One result set, computed once per snapshot and shared by every session that
        asks for the same one (a class opening the dashboard at once asks 50 times);
        `remember`ed to be answered again on the next snapshot (_warm)."""
        resolved = self._resolve(filters, snap)
        variable = resolved.variable()
        key = (snap.version, name, repr(sorted(variable.items())), repr(sorted(params.items())))
        if remember:
            asked = repr((name, filters, filters.only_keys, sorted(params.items())))  # repr leaves keys out
            with self._recent_lock:
                self._recent[asked] = (name, filters, dict(params))
                self._recent.move_to_end(asked)
                while len(self._recent) > WARM_RESULTS:
                    self._recent.popitem(last=False)
        return self._results.get(key, lambda: self._query(snap, name, resolved, params))

    def _warm(self, fresh: _Snapshot) -> None:
        """Answer on `fresh` what sessions asked for lately, before it replaces the current
        snapshot: the ETL changes the store every few minutes, and without this the first
        sessions after each change would all wait for their pages' queries at once."""
        if not self._results.max_entries:
            return  # nothing is shared: nothing to prepare
        with self._recent_lock:
            asked = list(reversed(self._recent.values()))  # the most recent first
        deadline = time.monotonic() + WARM_FOR_S
        for name, filters, params in asked:
            if time.monotonic() > deadline:
                break
            try:
                self._run(fresh, name, filters, params)
            except Exception:  # the page asking for it again will see and report the error
                log.warning("warming %s on the new snapshot failed", name, exc_info=True)

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
    def cursor(self, filters: Filters | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor on the current snapshot with `filters` set, for SQL of one's own over
        the same views (tests compare the two kinds of rows with it)."""
        snap = self._snapshot()
        with self._cursor(snap, self._resolve(filters or Filters(), snap)) as cur:
            yield cur

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

    def _window_partials(
        self,
        snap: _Snapshot,
        spans: list[tuple[dt.datetime, dt.datetime]],
        tz: str,
        *,
        edges: tuple[int, ...],
    ) -> dict[str, pa.Table]:
        """The Nodes page's partials of `spans` (serving.covered) in zone `tz` with the
        prompt bands `edges`, merged: once for all the page's queries over the same spans."""
        wanted = self._partial_jobs(snap, spans, tz, edges=edges)
        return self._merged_partials.get(
            tuple(key for _, _, key in wanted),
            lambda: serving.merged(self._partials_of(snap, wanted, tz, edges=edges)),
        )

    def _partial_jobs(
        self,
        snap: _Snapshot,
        spans: list[tuple[dt.datetime, dt.datetime]],
        tz: str,
        *,
        edges: tuple[int, ...],
    ) -> list[tuple[dt.datetime, dt.datetime, Hashable]]:
        """Each span with what its partials depend on (their cache key): the span, the
        zone, the prompt bands' edges, the day file and the one before."""
        wanted: list[tuple[dt.datetime, dt.datetime, Hashable]] = []
        for start, end in spans:
            day = start.date()
            if day in snap.days or day - DAY in snap.days:  # else no request was in flight
                fingerprints = (snap.fingerprints.get(day), snap.fingerprints.get(day - DAY))
                wanted.append((start, end, (start, end, tz, edges, fingerprints)))
        return wanted

    def _partials_of(
        self,
        snap: _Snapshot,
        wanted: list[tuple[dt.datetime, dt.datetime, Hashable]],
        tz: str,
        *,
        edges: tuple[int, ...],
    ) -> list[serving.Partials]:
        """The partials of each span: from the cache, else computed, one at a time: at
        10M requests a year, a day takes 0.1 GB of working memory, more in parallel, for
        little gain on two cores."""
        return list(
            _partial_pool().map(
                lambda job: self._partials.get(
                    job[2], lambda: self._compute_partials(snap, job[0], job[1], tz, edges=edges)
                ),
                wanted,
            )
        )

    def _compute_partials(
        self, snap: _Snapshot, start: dt.datetime, end: dt.datetime, tz: str, *, edges: tuple[int, ...]
    ) -> serving.Partials:
        """The partials of [start, end), within one UTC day: the serving views over it as
        the range, over that day's requests and those of the day before, read from their
        files (not kept: the partials are)."""
        span = Filters(start=start, end=end, tz=tz, bucket="day")
        day = start.date()
        files = [str(empty_day()), *(str(snap.days[d]) for d in (day - DAY, day) if d in snap.days)]
        with self._lock:
            cur = snap.con.cursor()
        try:
            for name, table in serving.empty_tables().items():
                cur.register(serving.PARTIAL_TABLES[name], table)
            cur.register("window_cached", day_cache.SCHEMA.empty_table())
            cur.execute("SET VARIABLE window_files = $files", {"files": files})
            cur.execute("SET VARIABLE filters = $filters", {"filters": span.variable()})
            cur.execute("SET VARIABLE whole = $whole", {"whole": {"start": end, "stop": end}})
            cur.execute("SET VARIABLE prompt_edges = $edges", {"edges": list(edges)})
            return serving.compute(cur)
        finally:
            cur.close()

    def _snapshot(self) -> _Snapshot:
        """The current snapshot. A newer store is loaded in the background while queries
        go on reading the old snapshot; only the very first load makes queries wait."""
        with self._lock:
            now = time.monotonic()
            if self._current is not None and now - self._checked < RECHECK_S:
                return self._current
            self._checked = now
            found = snapshot.version(self.store)
            if self._current is None:
                self._current = self._load(found)
            elif found != self._current.version and not self._loading and not self._waiting(found, now):
                self._loading = True
                # not a daemon: a process that exits mid-load waits for it instead of aborting
                threading.Thread(target=self._reload, args=(found,), name="snapshot-load").start()
            return self._current

    def _waiting(self, found: tuple[tuple[str, int, int], ...], now: float) -> bool:
        """A version that failed to load is retried after a pause, not every check."""
        return self._failed is not None and self._failed[0] == found and now < self._failed[1]

    def _reload(self, found: tuple[tuple[str, int, int], ...]) -> None:
        try:
            fresh = self._load(found)
            self._warm(fresh)
        except Exception as exc:  # a damaged file or no memory: keep serving the old snapshot
            log.exception("could not load the store %s; still serving the previous snapshot", self.store)
            with self._lock:
                self._failed = (found, time.monotonic() + RETRY_FAILED_S)
                self.last_error = f"{type(exc).__name__}: {exc}"
        else:
            with self._lock:
                self._current, self._failed, self.last_error = fresh, None, None
        finally:
            with self._lock:
                self._loading = False

    def _load(self, found: tuple[tuple[str, int, int], ...]) -> _Snapshot:
        con, rollup_rows = snapshot.load(self.store, self._rollups, self._months, self.zone, self._damaged)
        if self.prices:
            con.executemany(
                "INSERT INTO price_book VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [astuple(price) for price in self.prices],
            )
        row = con.execute("SELECT min(first_start), max(last_start) FROM rollup_rows").fetchone()
        first, last = row if row else (None, None)
        days = {day: rollup.path for day, rollup in self._rollups.items()}
        day_rollups = {day: rollup.rows for day, rollup in self._rollups.items() if rollup.rows is not None}
        zones = {rollup.zone for rollup in self._rollups.values()}
        return _Snapshot(
            con=con,
            version=found,
            first=first,
            last=last,
            days=days,
            rollup_rows=rollup_rows,
            months={month: m.rows for month, m in self._months.items()},
            day_rollups=day_rollups,
            day_series={day: rollup.series for day, rollup in self._rollups.items()},
            fingerprints={day: rollup.fingerprint for day, rollup in self._rollups.items()},
            series_zone=zones.pop() if len(zones) == 1 else (self.zone if not zones else None),
            damaged={name: damage.error for name, damage in sorted(self._damaged.items())},
        )

    @staticmethod
    def _resolve(filters: Filters, snap: _Snapshot) -> Filters:
        """Open range ends become the store's first and last request (an empty store: the
        last day). A range beyond the data stays a valid, empty range."""
        if filters.start is not None and filters.end is not None:
            return filters
        tick = dt.timedelta(microseconds=1)
        last = snap.last + tick if snap.last else dt.datetime.now(dt.UTC)
        first = snap.first or last - dt.timedelta(days=1)
        start = filters.start or min(first, (filters.end or last) - tick)
        end = filters.end or max(last, start + tick)
        return replace(filters, start=start, end=end)


POOL_WORKERS = 3
_executor: ThreadPoolExecutor | None = None
_partial_executor: ThreadPoolExecutor | None = None


_prefetch_executor: ThreadPoolExecutor | None = None


def _prefetch_pool() -> ThreadPoolExecutor:
    """One thread: what a page may ask for next takes at most one core from what it asks now."""
    global _prefetch_executor  # noqa: PLW0603  one pool per process, made on first use
    with _readers_lock:
        if _prefetch_executor is None:
            _prefetch_executor = ThreadPoolExecutor(1, thread_name_prefix="prefetch")
        return _prefetch_executor


def _partial_pool() -> ThreadPoolExecutor:
    """The days' partials are computed here, not in the queries' pool: a query waiting for
    them there could leave no worker to compute them."""
    global _partial_executor  # noqa: PLW0603  one pool per process, made on first use
    if _partial_executor is None:
        _partial_executor = ThreadPoolExecutor(1, thread_name_prefix="partials")
    return _partial_executor


def _pool() -> ThreadPoolExecutor:
    global _executor  # noqa: PLW0603  one pool per process, made on first use
    with _readers_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(POOL_WORKERS, thread_name_prefix="query")
        return _executor


_readers: dict[tuple[Path, tuple[Price, ...]], StoreReader] = {}
_readers_lock = threading.Lock()


def reader(store: Path, zone: str = DEFAULT_TIMEZONE, prices: tuple[Price, ...] = ()) -> StoreReader:
    """The process-wide reader of `store` with the price book `prices` (one snapshot per
    store and price book); `zone` is the lab's display zone (`dashboard.timezone`), the
    zone of the series the ETL writes."""
    key = (store.resolve(), prices)
    with _readers_lock:
        if key not in _readers:
            _readers[key] = StoreReader(key[0], zone=zone, prices=prices)
            threading.Thread(target=_readers[key].prepare_nodes, name="nodes-prepare", daemon=True).start()
        return _readers[key]


def run(name: str, store: Path, filters: Filters | None = None, **params: Any) -> pd.DataFrame:
    return reader(store).run(name, filters, **params)
