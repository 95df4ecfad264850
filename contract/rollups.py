"""Rollups: each day file's requests summed per group, so that a page over months reads
thousands of rows, not millions.

One rollup file per day file, `rollups/date=D/rollup-v<format>-<size>-<mtime_ns>.parquet`:
its name carries the day file it was built from (size and modification time, which every
rewrite of a day file changes). A rollup whose day file has changed since no longer has
the name a reader looks for, so it is never used: a run killed between replacing a day
file and its rollup leaves the day without a rollup (readers then sum the day file
themselves), never with a stale one, and the next run builds it. The day file stays the
source of truth; a rollup can always be rebuilt from it (`python -m etl rollup`).
How a rollup is named and summed is here, for the ETL that writes them (etl/rollup.py)
and for the readers that sum the recent days themselves (queries/snapshot.py).

A rollup row is one UTC day and one combination of the GROUPS of `contract/measures.py`,
with every PART of that file summed (or its min / max): the measures come from there,
not from a list of their own.

Beside it, the day's series, `series-v<format>-<zone>-<size>-<mtime_ns>.parquet`: the
same parts per local date in the lab's display zone (`dashboard.timezone`), status and
latency bin (the logarithmic bins of contract/measures.py), without the other groups. It
gives the lab's daily buckets and median latency without reading requests.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from contract.measures import DERIVED, GROUPS, HIST_MACROS, PARTS
from contract.store import REQUESTS_FILE_SCHEMA, ROLLUPS_DIR, UTC_TS, day_file

if TYPE_CHECKING:
    import duckdb

FORMAT = 1  # bump when the rollup's columns or meaning change: older rollups are rebuilt
PREFIX = "rollup-"
SERIES_PREFIX = "series-"

# the day file's columns a rollup reads
_COLUMNS = sorted(
    {"start_time", "end_time", "completion_start_time", "completion_tokens", "ingested_at", *GROUPS}
    | {"spend", "prompt_tokens", "cached_tokens", "reasoning_tokens", "duration_ms"}
)
_QUOTED_GROUPS = ", ".join(f'"{g}"' for g in GROUPS)
ROLLUP_SQL = f"""
SELECT
    $day::DATE AS date,
    {_QUOTED_GROUPS},
    {", ".join(f"{p.combine}({p.sql})::{p.type} AS {p.name}" for p in PARTS)}
FROM (SELECT *, {", ".join(f"{sql} AS {name}" for name, sql in DERIVED.items())} FROM day_rows)
GROUP BY ALL
ORDER BY ALL
"""
SERIES_SQL = f"""
SELECT
    $day::DATE AS date,
    (start_time AT TIME ZONE $zone)::DATE AS local_date,
    status,
    hist_bin(duration_ms) AS latency_bin,
    {", ".join(f"{p.combine}({p.sql})::{p.type} AS {p.name}" for p in PARTS)}
FROM (SELECT *, {", ".join(f"{sql} AS {name}" for name, sql in DERIVED.items())} FROM day_rows)
GROUP BY ALL
ORDER BY ALL
"""


_ARROW_TYPES = {"BIGINT": pa.int64(), "DOUBLE": pa.float64(), "TIMESTAMPTZ": UTC_TS}
ROLLUP_SCHEMA = pa.schema(
    [
        ("date", pa.date32()),
        *((g, REQUESTS_FILE_SCHEMA.field(g).type) for g in GROUPS),
        *((p.name, _ARROW_TYPES[p.type]) for p in PARTS),
    ]
)
SERIES_SCHEMA = pa.schema(
    [
        ("date", pa.date32()),
        ("local_date", pa.date32()),
        ("status", pa.string()),
        ("latency_bin", pa.int32()),
        *((p.name, _ARROW_TYPES[p.type]) for p in PARTS),
    ]
)


@dataclass(frozen=True)
class Source:
    """The day file a rollup is built from, as the file system describes it now."""

    day: dt.date
    path: Path
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, store: Path, day: dt.date) -> Source | None:
        path = day_file(store, day)
        try:
            stat = path.stat()
        except FileNotFoundError:
            return None
        return cls(day, path, stat.st_size, stat.st_mtime_ns)

    def rollup_path(self, store: Path) -> Path:
        return rollup_dir(store, self.day) / f"{PREFIX}v{FORMAT}-{self.size}-{self.mtime_ns}.parquet"

    def series_path(self, store: Path, zone: str) -> Path:
        name = f"{SERIES_PREFIX}v{FORMAT}-{zone_name(zone)}-{self.size}-{self.mtime_ns}.parquet"
        return rollup_dir(store, self.day) / name

    def series_paths(self, store: Path) -> dict[str, Path]:
        """This day file's series, by zone (one, unless the display zone changed)."""
        pattern = f"{SERIES_PREFIX}v{FORMAT}-*-{self.size}-{self.mtime_ns}.parquet"
        found = {}
        for path in rollup_dir(store, self.day).glob(pattern):
            zone = path.name.removeprefix(f"{SERIES_PREFIX}v{FORMAT}-").rsplit("-", 2)[0]
            found[zone.replace("~", "/")] = path
        return found


def zone_name(zone: str) -> str:
    """A time zone in a file name (IANA names hold letters, digits, _ + - and /)."""
    return zone.replace("/", "~")


def rollup_dir(store: Path, day: dt.date) -> Path:
    return store / ROLLUPS_DIR / f"date={day.isoformat()}"


_local = threading.local()  # one DuckDB per thread: opening one costs more than a day's sums


def summarise(rows: pa.Table, day: dt.date) -> pa.Table:
    """The rollup of one day's requests (a day file's columns, at least _COLUMNS)."""
    return _summed(ROLLUP_SQL, rows, {"day": day}).cast(ROLLUP_SCHEMA)


def series(rows: pa.Table, day: dt.date, zone: str) -> pa.Table:
    """The series of one day's requests in the display zone `zone`."""
    return _summed(SERIES_SQL, rows, {"day": day, "zone": zone}).cast(SERIES_SCHEMA)


def merge(tables: list[pa.Table], date: dt.date) -> pa.Table:
    """Several rollups as one, dated `date` (the readers' months), with Arrow's group-by."""
    rows = pa.concat_tables([t.cast(ROLLUP_SCHEMA) for t in tables])
    summed = rows.group_by(list(GROUPS), use_threads=False).aggregate([(p.name, p.combine) for p in PARTS])
    columns = {g: summed[g] for g in GROUPS} | {p.name: summed[f"{p.name}_{p.combine}"] for p in PARTS}
    columns["date"] = pa.array([date] * summed.num_rows, pa.date32())
    return pa.table({name: columns[name] for name in ROLLUP_SCHEMA.names}).cast(ROLLUP_SCHEMA)


def _summed(sql: str, rows: pa.Table, params: dict[str, object]) -> pa.Table:
    import duckdb  # noqa: PLC0415  here: a run with nothing new never sums, and starts sooner

    con: duckdb.DuckDBPyConnection | None = getattr(_local, "con", None)
    if con is None:
        con = _local.con = duckdb.connect()
        con.execute("SET threads = 1")  # a day is small; readers sum several at once
        for statement in HIST_MACROS:
            con.execute(statement)
    con.register("day_rows", rows)
    try:
        return con.sql(sql, params=params).to_arrow_table()
    finally:
        con.unregister("day_rows")


def read_day(source: Source) -> pa.Table | None:
    """The day file's columns a rollup needs, read through one open handle; None if the
    file is gone or not the one `source` describes any more (replaced meanwhile)."""
    try:
        with source.path.open("rb") as handle:
            stat = os.fstat(handle.fileno())
            if (stat.st_size, stat.st_mtime_ns) != (source.size, source.mtime_ns):
                return None
            return pq.ParquetFile(handle).read(columns=_COLUMNS)
    except FileNotFoundError:
        return None
