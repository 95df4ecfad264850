"""The query side of monthly statements (contract/statements.py; closed by
ops/statements.py): which requests a month counts, and the requests of closed months that
no statement counts yet (they came later), as adjustment lines. The lines themselves are
one definition, setup/views.sql `statement_lines`, over a month's sums or over late
requests.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contract.statements import (
    ADJUSTMENT,
    REQUEST_IDS_SCHEMA,
    changed_since_closing,
    closed_months,
    counted_request_ids,
    read_statement,
)
from contract.store import REQUESTS_FILE_SCHEMA, UTC_TS, day_file, older_layout, upgraded
from queries import day_cache
from queries.filters import Filters
from queries.window import empty_day

LATE_LINES = """
SELECT *
FROM statement_lines('scoped')
ORDER BY spend_usd DESC, requests DESC, "user" NULLS LAST, key_alias NULLS LAST, api_key_hash,
    client NULLS LAST
"""


def month_filters(start: dt.datetime, end: dt.datetime, zone: str) -> Filters:
    return Filters(start=start, end=end, tz=zone)


def _day_files(store: Path, start: dt.datetime, end: dt.datetime) -> list[Path]:
    """The day files (UTC days) that can hold requests started in [start, end)."""
    day, last = (
        start.astimezone(dt.UTC).date(),
        (end.astimezone(dt.UTC) - dt.timedelta(microseconds=1)).date(),
    )
    files = []
    while day <= last:
        path = day_file(store, day)
        if path.is_file():
            files.append(path)
        day += dt.timedelta(days=1)
    return files


def _requests(store: Path, start: dt.datetime, end: dt.datetime, columns: list[str] | None) -> pa.Table:
    """The stored requests started in [start, end), as the store's current layout has
    them (a day file of an older layout with the columns added since as NULL)."""
    schema = (
        REQUESTS_FILE_SCHEMA
        if columns is None
        else pa.schema([REQUESTS_FILE_SCHEMA.field(c) for c in columns])
    )
    tables = []
    for path in _day_files(store, start, end):
        file = pq.ParquetFile(path)
        if columns is None and older_layout(file.schema_arrow):
            table = pa.concat_tables(
                [upgraded(batch) for batch in file.iter_batches()] or [schema.empty_table()]
            )
        else:
            table = file.read(columns=columns).cast(schema)
        times = table["start_time"]
        kept = pc.and_(
            pc.greater_equal(times, pa.scalar(start, UTC_TS)), pc.less(times, pa.scalar(end, UTC_TS))
        )
        tables.append(table.filter(kept))
    return pa.concat_tables(tables) if tables else schema.empty_table()


def request_ids(store: Path, start: dt.datetime, end: dt.datetime, of_month: str) -> pa.Table:
    """The request_id of every stored request started in [start, end), sorted."""
    return request_ids_of(_requests(store, start, end, ["request_id", "start_time"]), of_month)


def late(reader: LateReader, before: dt.date, zone: str) -> tuple[pd.DataFrame, pa.Table]:
    """The requests of the months closed before `before` that no closed statement counts
    (they came after): their statement lines (kind 'adjustment', of_month their month) as
    this reader may see them, and their ids. Only the closed months whose day files
    changed after their closing are read (contract.statements.changed_since_closing)."""
    store, frames, ids = reader.store, [], []
    for month in closed_months(store):
        statement = read_statement(store, month) if month < before else None
        if statement is None or not changed_since_closing(
            store, statement, _day_files(store, statement.start, statement.end)
        ):
            continue
        rows = _requests(store, statement.start, statement.end, None)
        counted = counted_request_ids(store, month)["request_id"]
        rows = rows.filter(pc.invert(pc.is_in(rows["request_id"], value_set=counted)))
        if rows.num_rows == 0:
            continue
        lines = _lines(reader, rows, statement.start, statement.end, zone)
        frames.append(lines.assign(kind=ADJUSTMENT, of_month=statement.name))
        ids.append(request_ids_of(rows, statement.name))
    return (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(),
        pa.concat_tables(ids) if ids else REQUEST_IDS_SCHEMA.empty_table(),
    )


def request_ids_of(rows: pa.Table, of_month: str) -> pa.Table:
    """The distinct request ids of `rows`, sorted, each marked as of `of_month`."""
    ids = pc.unique(rows["request_id"]).sort()
    months = pa.repeat(pa.scalar(of_month, pa.string()), len(ids))
    return pa.table({"request_id": ids.cast(pa.string()), "of_month": months}, schema=REQUEST_IDS_SCHEMA)


def _lines(
    reader: LateReader, rows: pa.Table, start: dt.datetime, end: dt.datetime, zone: str
) -> pd.DataFrame:
    """statement_lines over `rows` only: the same views and definition as a month's."""
    with tempfile.TemporaryDirectory(prefix="late-") as folder:
        path = Path(folder) / "late.parquet"
        pq.write_table(rows, path)
        with reader.cursor(month_filters(start, end, zone)) as cur:
            # the cursor's single requests (the `requests` view: its window's days in
            # memory, `window_cached`, and the files named by `window_files`, see
            # snapshot.py) are these only
            cur.register("window_cached", day_cache.SCHEMA.empty_table())
            cur.execute("SET VARIABLE window_files = $files", {"files": [str(empty_day()), str(path)]})
            return cur.execute(LATE_LINES).df()


class LateReader(Protocol):
    """A StoreReader, or a student's ScopedReader (its cursor carries their keys)."""

    @property
    def store(self) -> Path: ...

    def cursor(self, filters: Filters | None = None) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...
