"""Result sets on a snapshot, shared by every session: each computed once per snapshot,
the recent ones remembered to be answered again on the next, and a batch asked ahead."""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from queries.cursors import Cursors
from queries.filters import Filters
from queries.loaded import _Snapshot
from queries.shared import Shared

log = logging.getLogger("queries")

WARM_RESULTS = 200  # recent result sets answered again on each new snapshot
WARM_FOR_S = 20.0  # at most this long, so that new data is never held back for long
# What is asked ahead (prefetch) waits until no page has asked for anything for this long:
# computed while a person reads, never beside a click's own queries and drawing. Asked
# beside them, the Overview's highlights ahead (eight users' parts, about 2 s of both
# cores at 1M requests) made the next clicks slower than computing a highlight on the
# click (issue 30, bench/browser_bench.py: highlight on 0.86 s against 0.77 s without).
PREFETCH_QUIET_S = 1.0

# a query of run_many: its name, filters, and (optionally) its other parameters
Job = tuple[str, Filters] | tuple[str, Filters, Mapping[str, Any]]


class Results(Cursors):
    """StoreReader's result sets, on the snapshot it is given."""

    _current: _Snapshot | None
    _results: Shared[pd.DataFrame]
    _recent: OrderedDict[str, tuple[str, Filters, dict[str, Any]]]
    _recent_lock: threading.Lock
    _prefetching: int
    _prefetch_newest: int
    _asked_at: float  # time.monotonic() of the latest result set asked, not ahead

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
        if remember:  # asked now, not ahead: what is asked ahead waits (_quiet)
            self._asked_at = time.monotonic()
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

    def _prefetch(self, snap: _Snapshot, jobs: dict[str, Job], batch: int) -> None:
        try:
            for job in jobs.values():
                if not self._quiet(lambda: snap is self._current and batch == self._prefetch_newest):
                    return  # a newer store serves, or a newer page asks ahead
                self._run(snap, job[0], job[1], job[2] if len(job) > 2 else {}, remember=False)
        except Exception:  # a page asking for it will see and report the error
            log.warning("prefetching %d result sets failed", len(jobs), exc_info=True)
        finally:
            with self._recent_lock:
                self._prefetching -= 1

    def _quiet(self, wanted: Callable[[], bool]) -> bool:
        """Waits until no page has asked for anything for PREFETCH_QUIET_S; False as soon
        as what waits is no longer `wanted`."""
        while wanted():
            waited = time.monotonic() - self._asked_at
            if waited >= PREFETCH_QUIET_S:
                return True
            time.sleep(PREFETCH_QUIET_S - waited)
        return False

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
