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

This module: StoreReader, which keeps the store's snapshot current (a newer store loaded
in the background) and answers on it, and the process-wide reader of a store. What it
does on a given snapshot is in its layers: results.py (shared result sets, warming,
prefetching), cursors.py (a query's cursor on its window), node_partials.py (the Nodes
page's partials); the named SQL files are read by sql_files.py.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import astuple
from pathlib import Path
from typing import Any, Protocol

import duckdb
import pandas as pd
import pyarrow as pa

from queries import day_cache, serving, snapshot
from queries.filters import Filters
from queries.loaded import _Snapshot
from queries.results import Job, Results
from queries.shared import Shared
from queries.sql_files import NAME_PARAMS, UnknownQuery, days_read, load_sql, query_names, with_defaults
from queries.window import DAY
from settings.config import DEFAULT_TIMEZONE
from settings.price_book import Price, boundaries

# what other code imports from here (some of it defined in sql_files.py and results.py)
__all__ = [
    "NAME_PARAMS",
    "Job",
    "Reader",
    "StoreReader",
    "UnknownQuery",
    "days_read",
    "load_sql",
    "query_names",
    "reader",
    "run",
    "with_defaults",
]

log = logging.getLogger("queries")

RECHECK_S = 1.0  # how often to look for a newer store (a stat per day file: ~2 ms a year)
# the Nodes page's partials kept: a month at 10M requests a year takes 29 MB (1.0 MB a
# day, of which levels in flight 0.4 MB and prompt bands 0.3 MB)
PARTIALS_MB = 64
RETRY_FAILED_S = 60.0  # how long to wait before loading a store that failed to load again


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


PREFETCH_BATCHES = 4  # prefetch() batches that may wait; more are dropped


class StoreReader(Results):
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
        self._asked_at = 0.0  # a page's latest result set asked: what is asked ahead waits (_quiet)

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

    @contextmanager
    def cursor(self, filters: Filters | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor on the current snapshot with `filters` set, for SQL of one's own over
        the same views (tests compare the two kinds of rows with it)."""
        snap = self._snapshot()
        with self._cursor(snap, self._resolve(filters or Filters(), snap)) as cur:
            yield cur

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


POOL_WORKERS = 3
_executor: ThreadPoolExecutor | None = None
_prefetch_executor: ThreadPoolExecutor | None = None


def _prefetch_pool() -> ThreadPoolExecutor:
    """One thread: what a page may ask for next takes at most one core from what it asks now."""
    global _prefetch_executor  # noqa: PLW0603  one pool per process, made on first use
    with _readers_lock:
        if _prefetch_executor is None:
            _prefetch_executor = ThreadPoolExecutor(1, thread_name_prefix="prefetch")
        return _prefetch_executor


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
