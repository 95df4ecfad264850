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
import logging
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contract.errors import StoreCorrupt
from contract.store import (
    REQUESTS_FILE_SCHEMA,
    RUNS_FILE,
    RUNS_SCHEMA,
    SET_ASIDE,
    STAGING_DIR,
    day_file,
    older_layout,
    upgraded,
)
from etl.files import PARQUET_OPTIONS, atomic_replace, atomic_write_table, fsync_dir

ROW_GROUP_ROWS = 128 * 1024

log = logging.getLogger("etl")


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
                pq.write_table(part, folder / f"{name}-{self._parts:06d}.parquet", compression="lz4")

    def days(self) -> list[dt.date]:
        if not self.root.is_dir():
            return []
        return sorted(dt.date.fromisoformat(p.name) for p in self.root.iterdir() if p.is_dir())

    def kept(self, day: dt.date) -> list[Path]:
        """The day's staged store rows, one file per extracted chunk, in reading order."""
        return sorted((self.root / day.isoformat()).glob("kept-*.parquet"))

    def seen(self, day: dt.date) -> pa.Array:
        """request_ids of the day's rows dropped as noise (full refresh only)."""
        return _ids(sorted((self.root / day.isoformat()).glob("seen-*.parquet")))

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.root.parent.rmdir()  # .staging itself, once no run uses it


# a run's id (run.py): its staging folder's name
_RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{8}")


def remove_staging(store: Path) -> None:
    """Staging left by killed runs: never visible to readers, safe to discard. Only the
    runs' own folders go: --store may be a directory that is not a store."""
    staging = store / STAGING_DIR
    if not staging.is_dir() or staging.is_symlink():
        return
    for folder in staging.iterdir():
        if _RUN_ID.fullmatch(folder.name) and not folder.is_symlink():
            shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        staging.rmdir()  # only when nothing else is in it


@dataclass(frozen=True)
class DayMerge:
    written: int  # rows of this run now in the day file
    already_stored: int  # incremental: duplicates skipped; full refresh: stored rows replaced
    set_aside: Path | None = None  # the day's file, unreadable, renamed beside it (SET_ASIDE)


# A day file the ETL cannot read is renamed `part-0.parquet.damaged-<UTC time>` in its
# folder (contract.store.SET_ASIDE), and the day is written anew from the run's rows: one
# damaged file must not stop every run (and every new request) for everyone.


class _Unreadable(Exception):
    """The existing day file failed while being read (not while writing the new one)."""


def merge_day(store: Path, day: dt.date, staged: list[Path], replace: pa.Array | None = None) -> DayMerge:
    """Fold a day's staged files into the day's store file, streaming: memory holds the
    day's request_ids and one staged chunk, never the whole day.

    Incremental (`replace` is None): rows whose request_id the day already holds are
    skipped; the first copy stays. Full refresh: stored rows whose request_id was read
    again (staged, or in `replace`: read but now noise) give way to the fresh version or
    go; stored rows the source no longer has are kept. A day file that cannot be read is
    set aside (SET_ASIDE) and the day written from the staged rows alone.
    """
    path = day_file(store, day)
    try:
        return _merge_into(path, staged, replace)
    except _Unreadable as damage:
        aside = path.with_name(f"{path.name}{SET_ASIDE}{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}")
        path.replace(aside)
        fsync_dir(path.parent)
        log.error(
            "%s could not be read (%s); set aside as %s, and the day written anew from this run's "
            "rows. Its earlier requests: `python -m etl run --full-refresh` restores those LiteLLM "
            "still holds; the set-aside file keeps the rest for repair",
            path,
            damage,
            aside.name,
        )
        merged = _merge_into(path, staged, replace)
        return DayMerge(merged.written, merged.already_stored, set_aside=aside)


def _merge_into(path: Path, staged: list[Path], replace: pa.Array | None) -> DayMerge:
    existing = _open_day(path)
    try:
        older = existing is not None and older_layout(existing.schema_arrow)
        if existing is not None and existing.schema_arrow != REQUESTS_FILE_SCHEMA and not older:
            raise StoreCorrupt(
                f"{path} does not have the columns this version writes; "
                "build a new store with --full-refresh into an empty --store directory"
            )
        stored = _ids([]) if existing is None else _stored_ids(existing)
        new_ids = _ids(staged)
        # first copy of each request_id among this run's rows for the day (a partitioned
        # spend-log table keys on request_id and startTime, so the source may repeat one)
        keep = _first_copies(new_ids)
        if replace is None:
            keep = pc.and_(keep, pc.invert(pc.is_in(new_ids, value_set=stored)))
            drop = None
            written = _count(keep)
            already = len(new_ids) - written
            if written == 0:
                return DayMerge(written=0, already_stored=already)
        else:
            drop = pa.concat_arrays([new_ids, replace])
            written = _count(keep)
            already = _count(pc.is_in(stored, value_set=new_ids))
            if existing is None and written == 0:
                return DayMerge(written=0, already_stored=0)  # a day of noise only: no file

        def write(tmp: Path) -> None:
            with pq.ParquetWriter(tmp, REQUESTS_FILE_SCHEMA, **PARQUET_OPTIONS) as writer:
                groups = _RowGroups(writer)
                if existing is not None:
                    for batch in _batches(existing):
                        rows = (
                            upgraded(batch) if older else pa.Table.from_batches([batch], REQUESTS_FILE_SCHEMA)
                        )
                        groups.add(_without(rows, drop))
                offset = 0
                for file in staged:
                    table = pq.read_table(file, schema=REQUESTS_FILE_SCHEMA)
                    groups.add(table.filter(keep.slice(offset, table.num_rows)))
                    offset += table.num_rows
                groups.flush()

        atomic_replace(path, write)
        return DayMerge(written=written, already_stored=already)
    finally:
        if existing is not None:
            existing.close()


def _open_day(path: Path) -> pq.ParquetFile | None:
    if not path.exists():
        return None
    try:
        return pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise _Unreadable(f"{type(exc).__name__}: {exc}") from None


def _stored_ids(existing: pq.ParquetFile) -> pa.Array:
    try:
        return existing.read(columns=["request_id"])["request_id"].combine_chunks()
    except (OSError, pa.ArrowException) as exc:
        raise _Unreadable(f"{type(exc).__name__}: {exc}") from None


def _batches(existing: pq.ParquetFile) -> Iterator[pa.RecordBatch]:
    """The stored rows; a read error is the old file's, never the new one's (a full disk
    while writing stays an OSError and sets nothing aside)."""
    batches = existing.iter_batches(batch_size=ROW_GROUP_ROWS)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except (OSError, pa.ArrowException) as exc:
            raise _Unreadable(f"{type(exc).__name__}: {exc}") from None
        yield batch


def write_day(store: Path, day: dt.date, table: pa.Table) -> None:
    """Replace the day's file with `table` (REQUESTS_FILE_SCHEMA), atomically."""
    atomic_replace(
        day_file(store, day),
        lambda tmp: pq.write_table(table, tmp, row_group_size=ROW_GROUP_ROWS, **PARQUET_OPTIONS),
    )


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


def _ids(files: list[Path]) -> pa.Array:
    columns = [pq.read_table(f, columns=["request_id"])["request_id"] for f in files]
    return pa.chunked_array(columns, pa.string()).combine_chunks()


def _first_copies(ids: pa.Array) -> pa.Array:
    """True at the first occurrence of each value."""
    positions = pa.array(range(len(ids)), pa.int64())
    firsts = (
        pa.table({"id": ids, "at": positions}).group_by("id", use_threads=False).aggregate([("at", "min")])
    )
    return pc.is_in(positions, value_set=firsts["at_min"])


def _without(table: pa.Table, ids: pa.Array | pa.ChunkedArray | None) -> pa.Table:
    if ids is None or len(ids) == 0:
        return table
    return table.filter(pc.invert(pc.is_in(table["request_id"], value_set=ids)))


def _count(mask: pa.Array | pa.ChunkedArray) -> int:
    return int(pc.sum(pc.cast(mask, pa.int64())).as_py() or 0)
