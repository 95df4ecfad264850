"""Load: stage a run's rows, then fold them into the store's day files by atomic rename.

Each UTC day of `requests/` is one Parquet file. A run first writes what it read into a
private staging directory; only when the whole extraction has succeeded does it rewrite
the affected days, one atomic rename each, skipping request_ids the day already holds.
A run killed at any point leaves every day file either as it was or complete, so running
again (the bookmark has not moved) yields the same store.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from etl.errors import StoreCorrupt
from etl.files import PARQUET_OPTIONS, atomic_replace, atomic_write_table
from etl.store import (
    REQUESTS_FILE_SCHEMA,
    RUNS_FILE,
    RUNS_SCHEMA,
    STAGING_DIR,
    day_file,
)

ROW_GROUP_ROWS = 128 * 1024


class Staging:
    """A run's extracted rows, by UTC day, outside the store's visible part."""

    def __init__(self, store: Path, run_id: str) -> None:
        self.root = store / STAGING_DIR / run_id
        self._parts = 0

    def add(self, kept: pa.Table, dropped: pa.Table | None = None) -> None:
        """Stage store rows (`REQUESTS_SCHEMA`) and, for a full refresh, the ids of the
        rows dropped as noise (`request_id`, `date`) so their stored copies go too."""
        self._parts += 1
        for name, table in (("kept", kept), ("seen", dropped)):
            if table is None or table.num_rows == 0:
                continue
            for day in pc.unique(table["date"]).to_pylist():
                part = table.filter(pc.equal(table["date"], pa.scalar(day, pa.date32())))
                part = part.drop_columns(["date"]) if name == "kept" else part.select(["request_id"])
                folder = self.root / day.isoformat()
                folder.mkdir(parents=True, exist_ok=True)
                pq.write_table(part, folder / f"{name}-{self._parts:06d}.parquet", compression="none")

    def days(self) -> list[dt.date]:
        if not self.root.is_dir():
            return []
        return sorted(dt.date.fromisoformat(p.name) for p in self.root.iterdir() if p.is_dir())

    def kept(self, day: dt.date) -> pa.Table:
        files = sorted((self.root / day.isoformat()).glob("kept-*.parquet"))
        if not files:
            return REQUESTS_FILE_SCHEMA.empty_table()
        return pa.concat_tables(pq.read_table(f, schema=REQUESTS_FILE_SCHEMA) for f in files)

    def seen(self, day: dt.date) -> pa.Array:
        files = sorted((self.root / day.isoformat()).glob("seen-*.parquet"))
        ids = [pq.read_table(f)["request_id"] for f in files]
        return pa.chunked_array(ids, pa.string()).combine_chunks() if ids else pa.array([], pa.string())

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.root.parent.rmdir()  # .staging itself, once no run uses it


def remove_staging(store: Path) -> None:
    """Staging left by killed runs: never visible to readers, safe to discard."""
    shutil.rmtree(store / STAGING_DIR, ignore_errors=True)


@dataclass(frozen=True)
class DayMerge:
    written: int  # rows of this run now in the day file
    already_stored: int  # incremental: duplicates skipped; full refresh: stored rows replaced


def merge_day(store: Path, day: dt.date, new: pa.Table, replace: pa.Array | None = None) -> DayMerge:
    """Fold `new` rows into the day's file.

    Incremental (`replace` is None): rows whose request_id the day already holds are
    skipped; the first copy stays. Full refresh: stored rows whose request_id was read
    again (`new`'s ids and `replace`) are replaced by the fresh version or, if that is
    now noise, removed; rows the source no longer has are kept.
    """
    path = day_file(store, day)
    new = _first_per_id(new)
    existing = pq.ParquetFile(path) if path.exists() else None
    try:
        if existing is not None and existing.schema_arrow != REQUESTS_FILE_SCHEMA:
            raise StoreCorrupt(
                f"{path} does not have the columns this version writes; "
                "build a new store with --full-refresh into an empty --store directory"
            )
        stored_ids = existing.read(columns=["request_id"])["request_id"] if existing else None
        if replace is None:
            already = 0
            if stored_ids is not None:
                dup = pc.is_in(new["request_id"], value_set=stored_ids)
                already = _count(dup)
                new = new.filter(pc.invert(dup))
            if new.num_rows == 0:
                return DayMerge(written=0, already_stored=already)
            drop_ids = None
        else:
            drop_ids = pa.chunked_array([new["request_id"].combine_chunks(), replace]).combine_chunks()
            already = _count(pc.is_in(stored_ids, value_set=drop_ids)) if stored_ids is not None else 0

        new = new.sort_by("start_time")

        def write(tmp: Path) -> None:
            with pq.ParquetWriter(tmp, REQUESTS_FILE_SCHEMA, **PARQUET_OPTIONS) as writer:
                groups = _RowGroups(writer)
                if existing is not None:
                    for batch in existing.iter_batches(batch_size=ROW_GROUP_ROWS):
                        stored = pa.Table.from_batches([batch], REQUESTS_FILE_SCHEMA)
                        if drop_ids is not None:
                            stored = stored.filter(
                                pc.invert(pc.is_in(stored["request_id"], value_set=drop_ids))
                            )
                        groups.add(stored)
                groups.add(new)
                groups.flush()

        atomic_replace(path, write)
        return DayMerge(written=new.num_rows, already_stored=already)
    finally:
        if existing is not None:
            existing.close()


def write_snapshot(path: Path, table: pa.Table) -> None:
    atomic_write_table(path, table)


def append_run(store: Path, record: dict[str, Any]) -> None:
    """Add one row to etl_runs.parquet (small: rewritten whole, atomically)."""
    path = store / RUNS_FILE
    row = pa.Table.from_pylist([record], schema=RUNS_SCHEMA)
    if path.exists():
        row = pa.concat_tables([pq.read_table(path, schema=RUNS_SCHEMA), row])
    atomic_write_table(path, row)


class _RowGroups:
    """Write tables in row groups of ROW_GROUP_ROWS, however the input is chunked, so
    that many small appends do not leave a day file of many tiny row groups."""

    def __init__(self, writer: pq.ParquetWriter) -> None:
        self._writer = writer
        self._pending: list[pa.Table] = []
        self._rows = 0

    def add(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        self._pending.append(table)
        self._rows += table.num_rows
        if self._rows >= ROW_GROUP_ROWS:
            full = pa.concat_tables(self._pending)
            cut = (full.num_rows // ROW_GROUP_ROWS) * ROW_GROUP_ROWS
            self._writer.write_table(full.slice(0, cut), row_group_size=ROW_GROUP_ROWS)
            rest = full.slice(cut)
            self._pending, self._rows = ([rest], rest.num_rows) if rest.num_rows else ([], 0)

    def flush(self) -> None:
        if self._pending:
            self._writer.write_table(pa.concat_tables(self._pending), row_group_size=ROW_GROUP_ROWS)
            self._pending, self._rows = [], 0


def _first_per_id(table: pa.Table) -> pa.Table:
    if table.num_rows == pc.count_distinct(table["request_id"]).as_py():
        return table
    indexed = table.append_column("_row", pa.array(range(table.num_rows), pa.int64()))
    first = indexed.group_by("request_id", use_threads=False).aggregate([("_row", "min")])
    rows = first["_row_min"]
    return table.take(pc.take(rows, pc.sort_indices(rows)))


def _count(mask: pa.Array | pa.ChunkedArray) -> int:
    return int(pc.sum(pc.cast(mask, pa.int64())).as_py() or 0)
