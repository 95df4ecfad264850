"""Rollups: each day file's requests summed per group, so that a page over months reads
thousands of rows, not millions.

One rollup file per day file, `rollups/date=D/rollup-v<format>-<size>-<mtime_ns>.parquet`:
its name carries the day file it was built from (size and modification time, which every
rewrite of a day file changes). A rollup whose day file has changed since no longer has
the name a reader looks for, so it is never used: a run killed between replacing a day
file and its rollup leaves the day without a rollup (readers then sum the day file
themselves), never with a stale one, and the next run builds it. The day file stays the
source of truth; a rollup can always be rebuilt from it (`python -m etl rollup`).

A rollup row is one UTC day and one combination of the GROUPS of `queries/metrics.py`,
with every PART of that file summed (or its min / max): the measures come from there,
not from a list of their own.

Beside it, the day's series, `series-v<format>-<zone>-<size>-<mtime_ns>.parquet`: the
same parts per local date in the lab's display zone (`dashboard.timezone`), status and
latency bin (the logarithmic bins of queries/metrics.py), without the other groups. It
gives the lab's daily buckets and median latency without reading requests.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from etl.files import atomic_write_table, fsync_dir
from etl.store import REQUESTS_FILE_SCHEMA, ROLLUPS_DIR, UTC_TS, day_file, stored_days
from queries.metrics import DERIVED, GROUPS, HIST_MACROS, PARTS

if TYPE_CHECKING:
    import duckdb

log = logging.getLogger("etl")

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


def build(store: Path, day: dt.date, zone: str) -> Path | None:
    """Write the rollup and the series (in display zone `zone`) of `day`'s current file
    (the ETL, under the store's lock), and remove the day's older ones. None when the day
    has no file."""
    source = Source.of(store, day)
    if source is None:
        return None
    rows = read_day(source)
    if rows is None:
        return None
    target = source.rollup_path(store)
    atomic_write_table(target, summarise(rows, day))
    timeline = source.series_path(store, zone)
    atomic_write_table(timeline, series(rows, day, zone))
    for old in [*target.parent.glob(f"{PREFIX}*.parquet"), *target.parent.glob(f"{SERIES_PREFIX}*.parquet")]:
        if old not in (target, timeline):
            old.unlink(missing_ok=True)
    fsync_dir(target.parent)
    return target


def remove_all(store: Path) -> None:
    """Delete every rollup and series (they are rebuilt from the day files)."""
    for prefix in (PREFIX, SERIES_PREFIX):
        for path in (store / ROLLUPS_DIR).glob(f"date=*/{prefix}*.parquet"):
            path.unlink(missing_ok=True)


def current(store: Path, day: dt.date, zone: str) -> bool:
    """Whether the day's file has its rollup and its series in `zone` (a few stat calls,
    no file read)."""
    source = Source.of(store, day)
    return source is None or (
        source.rollup_path(store).is_file() and source.series_path(store, zone).is_file()
    )


def missing(store: Path, zone: str) -> list[dt.date]:
    """The days whose file has no current rollup or series."""
    return [day for day in stored_days(store) if not current(store, day, zone)]


def refresh(store: Path, day: dt.date, zone: str) -> bool:
    """Build the day's rollup and series unless they are current; True if built."""
    if current(store, day, zone):
        return False
    return build(store, day, zone) is not None


def ensure(
    store: Path, zone: str, progress: Callable[[str], None] | None = None, every_s: float = 2.0
) -> int:
    """Build every missing rollup (never built, built by an older version, or the day file
    changed after it); returns how many. Idempotent, and resumable: what a killed call
    built stays built. A day file that cannot be read is named in a warning and skipped:
    readers sum it themselves if they can, and `python -m etl doctor` reports it."""
    days = missing(store, zone)
    if not days:
        return 0
    import duckdb  # noqa: PLC0415  only now: see _summed

    built, reported = 0, time.monotonic()
    for i, day in enumerate(days, 1):
        try:
            built += build(store, day, zone) is not None
        except (OSError, pa.ArrowException, duckdb.Error) as exc:
            log.warning("could not build the rollup of %s from %s: %s", day, day_file(store, day), exc)
        if progress and (time.monotonic() - reported >= every_s or i == len(days)):
            reported = time.monotonic()
            progress(f"rollups: {i:,}/{len(days):,} days built")
    return built
