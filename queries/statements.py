"""The query side of monthly statements (contract/statements.py; closed by
ops/statements.py): which requests a month counts, and the lines of those of a closed
month that its statement does not count (they came later). The lines themselves are one
definition, setup/views.sql `statement_lines`, over a month's sums or over late requests.
"""

from __future__ import annotations

import datetime as dt
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contract.statements import REQUEST_IDS_SCHEMA
from contract.store import REQUESTS_FILE_SCHEMA, UTC_TS, day_file, older_layout, upgraded
from queries import day_cache
from queries.filters import Filters
from queries.runner import StoreReader
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


def request_ids(store: Path, start: dt.datetime, end: dt.datetime) -> pa.Table:
    """The request_id of every stored request started in [start, end), sorted."""
    ids = _requests(store, start, end, ["request_id", "start_time"])["request_id"]
    unique = pc.unique(ids).sort()
    return pa.table({"request_id": unique.cast(pa.string())}, schema=REQUEST_IDS_SCHEMA)


def late_lines(
    reader: StoreReader, start: dt.datetime, end: dt.datetime, *, zone: str, counted: pa.Table
) -> pd.DataFrame:
    """The statement lines of the requests started in [start, end) whose request_id is
    not in `counted` (a closed month's): the same views and definition as a month's
    lines, over those requests only."""
    rows = _requests(reader.store, start, end, None)
    late = rows.filter(pc.invert(pc.is_in(rows["request_id"], value_set=counted["request_id"])))
    if late.num_rows == 0:
        return pd.DataFrame()
    with tempfile.TemporaryDirectory(prefix="late-") as folder:
        path = Path(folder) / "late.parquet"
        pq.write_table(late, path)
        with reader.cursor(month_filters(start, end, zone)) as cur:
            # the cursor's single requests (the `requests` view: its window's days in
            # memory, `window_cached`, and the files named by `window_files`, see
            # snapshot.py) are the late ones only
            cur.register("window_cached", day_cache.SCHEMA.empty_table())
            cur.execute("SET VARIABLE window_files = $files", {"files": [str(empty_day()), str(path)]})
            return cur.execute(LATE_LINES).df()
