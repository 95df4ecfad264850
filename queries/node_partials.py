"""The reader's side of the Nodes page's partials (queries/serving.py): each span's
computed on a cursor of its own, one span at a time on a thread of their own, cached
under what they depend on, and merged once per range for all of a page's queries."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Hashable
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa

from queries import day_cache, serving
from queries.filters import Filters
from queries.loaded import _Snapshot
from queries.shared import Shared
from queries.window import DAY, empty_day

_partial_executor: ThreadPoolExecutor | None = None


class NodePartials:
    """StoreReader's partials of the Nodes page, on the snapshot it is given."""

    _lock: threading.Lock
    _partials: Shared[serving.Partials]
    _merged_partials: Shared[dict[str, pa.Table]]

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


def _partial_pool() -> ThreadPoolExecutor:
    """The days' partials are computed here, not in the queries' pool: a query waiting for
    them there could leave no worker to compute them."""
    global _partial_executor  # noqa: PLW0603  one pool per process, made on first use
    if _partial_executor is None:
        _partial_executor = ThreadPoolExecutor(1, thread_name_prefix="partials")
    return _partial_executor
