"""Whose requests a session may see, applied to every query it runs.

A page gets a `ScopedReader`, never the store's reader itself: for a student every
query carries their keys (`Filters.only_keys`), which the `in_scope` view applies in
SQL, whatever filters the page or a crafted URL asked for. The one exception is
`peers`, the comparison bars a lab may allow: it returns per-person totals only, and
without names unless the lab's `peers` setting says "named".
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from queries.filters import Filters
from queries.runner import Job, StoreReader


class ScopedReader:
    def __init__(self, reader: StoreReader, keys: tuple[str, ...] | None) -> None:
        """`keys` None: everything (an administrator); a tuple: only those keys' requests."""
        self._reader = reader
        self.keys = keys

    @property
    def last_error(self) -> str | None:
        return self._reader.last_error

    @property
    def store(self) -> Path:
        return self._reader.store

    def cursor(self, filters: Filters | None = None) -> AbstractContextManager[duckdb.DuckDBPyConnection]:
        """A cursor of the reader's, its filters carrying this session's keys: every view
        it reads is confined to them (SQL of one's own: queries/statements.py)."""
        return self._reader.cursor(self._scoped(filters))

    def damaged(self) -> dict[str, str]:
        return self._reader.damaged()

    def run(self, name: str, filters: Filters | None = None, **params: Any) -> pd.DataFrame:
        return self._reader.run(name, self._scoped(filters), **params)

    def run_many(self, jobs: Mapping[str, Job]) -> dict[str, pd.DataFrame]:
        return self._reader.run_many(self._scoped_jobs(jobs))

    def prefetch(self, jobs: Mapping[str, Job]) -> None:
        self._reader.prefetch(self._scoped_jobs(jobs))

    def compare(self, name: str, filters: Filters, **params: Any) -> pd.DataFrame:
        return self._reader.compare(name, self._scoped(filters), **params)

    def resolve(self, filters: Filters) -> Filters:
        return self._scoped(self._reader.resolve(self._scoped(filters)))

    def peers(self, filters: Filters, *, named: bool, by: str = "requests") -> pd.DataFrame:
        """The students' totals for the comparison bars, the session's own as "You" (see
        peers.sql for what an anonymous peer shows: a letter and a rounded share)."""
        everyone = replace(filters, users=(), only_keys=None)
        return self._reader.run("peers", everyone, own_keys=list(self.keys or ()), named=named, by=by)

    def _scoped(self, filters: Filters | None) -> Filters:
        return replace(filters or Filters(), only_keys=self.keys)

    def _scoped_jobs(self, jobs: Mapping[str, Job]) -> dict[str, Job]:
        return {
            key: (job[0], self._scoped(job[1]), job[2] if len(job) > 2 else {}) for key, job in jobs.items()
        }
