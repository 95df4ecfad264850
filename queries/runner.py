"""Run the named SQL files of this folder over the store; DataFrames out.

    reader = StoreReader(store)
    reader.run("by_user", Filters.last(dt.timedelta(days=7)))

Every query reads the views `scoped` (requests narrowed by the filters) and `buckets`
(the display buckets of the range), plus the tables `facts`, `keys`, `users` and
`etl_runs`, from an in-memory snapshot of the store (queries/snapshot.py) that is
reloaded when the ETL changes the store. The filters are one session variable set on
the query's own cursor; other parameters are bound by name. No SQL is ever formatted.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from queries import snapshot
from queries.filters import Filters

log = logging.getLogger("queries")

QUERY_DIR = Path(__file__).parent
RECHECK_S = 2.0  # how often to look for a newer store


class UnknownQuery(LookupError):
    pass


def query_names() -> list[str]:
    return sorted(p.stem for p in QUERY_DIR.glob("*.sql"))


@cache
def load_sql(name: str) -> str:
    path = QUERY_DIR / f"{name}.sql"
    if not path.is_file():
        raise UnknownQuery(f"no query {name!r}; known: {', '.join(query_names())}")
    return path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class _Snapshot:
    con: duckdb.DuckDBPyConnection
    version: tuple[tuple[str, int, int], ...]
    first: dt.datetime | None  # oldest and newest request start in the store
    last: dt.datetime | None


class StoreReader:
    """Queries over one store, safe to share between threads (Streamlit sessions)."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._current: _Snapshot | None = None
        self._checked = 0.0
        self._loading = False

    def run(self, name: str, filters: Filters | None = None, **params: Any) -> pd.DataFrame:
        """The result of `<name>.sql` under `filters` (default: the whole store)."""
        sql = load_sql(name)
        snap, cur = self._cursor()
        try:
            variable = self._resolve(filters or Filters(), snap).variable()
            cur.execute("SET VARIABLE filters = $filters", {"filters": variable})
            return cur.execute(sql, params or None).df()
        finally:
            cur.close()

    def run_many(self, jobs: Mapping[str, tuple[str, Filters]]) -> dict[str, pd.DataFrame]:
        """Several queries at once, on a small shared thread pool: each query leaves a
        core idle part of the time, and the page needs all of them (measured: a page of
        eight queries takes ~30 % less time on two cores than one after the other)."""
        futures = {key: _pool().submit(self.run, name, filters) for key, (name, filters) in jobs.items()}
        return {key: future.result() for key, future in futures.items()}

    def compare(self, name: str, filters: Filters, **params: Any) -> pd.DataFrame:
        """A one-row query for `filters` and for the period of equal length before it,
        as two rows with `period` = "current" and "previous" (for the cards' deltas)."""
        current = self.run(name, filters, **params).assign(period="current")
        previous = self.run(name, filters.previous(), **params).assign(period="previous")
        return pd.concat([current, previous], ignore_index=True)

    def version(self) -> tuple[tuple[str, int, int], ...]:
        """Identifies the store's content: a cache keyed on it is never stale."""
        return self._snapshot().version

    def _cursor(self) -> tuple[_Snapshot, duckdb.DuckDBPyConnection]:
        snap = self._snapshot()
        with self._lock:
            return snap, snap.con.cursor()

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
            elif found != self._current.version and not self._loading:
                self._loading = True
                threading.Thread(
                    target=self._reload, args=(found,), name="snapshot-load", daemon=True
                ).start()
            return self._current

    def _reload(self, found: tuple[tuple[str, int, int], ...]) -> None:
        try:
            fresh = self._load(found)
            with self._lock:
                self._current = fresh
        except Exception:  # a half-replaced store or a full disk: keep serving, retry later
            log.exception("could not reload the store %s; still showing the previous snapshot", self.store)
        finally:
            with self._lock:
                self._loading = False

    def _load(self, found: tuple[tuple[str, int, int], ...]) -> _Snapshot:
        con = snapshot.load(self.store)
        row = con.execute("SELECT min(start_time), max(start_time) FROM facts").fetchone()
        first, last = row if row else (None, None)
        return _Snapshot(con=con, version=found, first=first, last=last)

    @staticmethod
    def _resolve(filters: Filters, snap: _Snapshot) -> Filters:
        """Open range ends become the store's first and last request (or an empty day)."""
        if filters.start is not None and filters.end is not None:
            return filters
        last = snap.last + dt.timedelta(microseconds=1) if snap.last else dt.datetime.now(dt.UTC)
        first = snap.first or last - dt.timedelta(days=1)
        return replace(
            filters,
            start=filters.start or first,
            end=filters.end or max(last, first + dt.timedelta(microseconds=1)),
        )


POOL_WORKERS = 3
_executor: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _executor  # noqa: PLW0603  one pool per process, made on first use
    with _readers_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(POOL_WORKERS, thread_name_prefix="query")
        return _executor


_readers: dict[Path, StoreReader] = {}
_readers_lock = threading.Lock()


def reader(store: Path) -> StoreReader:
    """The process-wide reader of `store` (one in-memory snapshot per store)."""
    key = store.resolve()
    with _readers_lock:
        if key not in _readers:
            _readers[key] = StoreReader(key)
        return _readers[key]


def run(name: str, store: Path, filters: Filters | None = None, **params: Any) -> pd.DataFrame:
    return reader(store).run(name, filters, **params)
