"""What every query reads, at one version of the store: an in-memory DuckDB holding the
small tables (keys, users, runs, the bookmark) and every day's rollup, with views over
the day files themselves that each query points at the days of its window.

Memory follows the rollups (a few thousand rows per day), not the requests; a query that
needs single requests reads only its window's day files (docs/architecture.md).
"""

from __future__ import annotations

import datetime as dt
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contract import rollups as rollup
from contract import statements
from contract.errors import StoreCorrupt
from contract.measures import DERIVED, GROUPS, PARTS, ROUTING_PARTS, macro_statements
from contract.state import State, read_state
from contract.store import (
    DAY_FILE,
    KEYS_FILE,
    KEYS_SCHEMA,
    RUNS_FILE,
    RUNS_SCHEMA,
    SET_ASIDE,
    STATE_FILE,
    USERS_FILE,
    USERS_SCHEMA,
    UTC_TS,
    day_file,
    requests_dir,
    stored_days,
)
from queries import day_cache, identity, serving
from queries.window import empty_day

log = logging.getLogger("queries")

SETUP_SQL = Path(__file__).parent / "setup" / "views.sql"

BOOKMARK_SCHEMA = pa.schema(
    [
        ("source", pa.string()),
        ("cursor_column", pa.string()),
        ("cursor", UTC_TS),
        ("start_max", UTC_TS),
        ("full_refresh_pending", pa.bool_()),
    ]
)
SNAPSHOT_TABLES: tuple[tuple[str, str, pa.Schema], ...] = (
    ("etl_runs", RUNS_FILE, RUNS_SCHEMA),
    ("keys", KEYS_FILE, KEYS_SCHEMA),
    ("users", USERS_FILE, USERS_SCHEMA),
)
LOAD_THREADS = 2  # two cores; more threads kept more memory (25 MB at 10M requests) for no speed
Fingerprint = tuple[int, int]  # a day file's size and modification time (contract/rollups.py)


def day_files(store: Path) -> list[Path]:
    return sorted(requests_dir(store).glob(f"date=*/{DAY_FILE}"))


def version(store: Path) -> tuple[tuple[str, int, int], ...]:
    """Changes whenever the ETL replaces a file the readers read."""
    paths = [
        *day_files(store),
        *(store / file for _, file, _ in SNAPSHOT_TABLES),
        store / STATE_FILE,
        *statements.manifests(store),
    ]
    out = []
    for path in paths:
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        out.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


@dataclass(frozen=True)
class DayRollup:
    """A day's rollup rows and series, and the day file they sum."""

    path: Path
    fingerprint: Fingerprint
    rows: pa.Table | None  # None: let go of (an older day; its month holds it merged)
    series: pa.Table
    zone: str  # the display zone of the series' local dates


@dataclass(frozen=True)
class Damage:
    """A store file that could not be read: what it was when it failed, and why. The same
    bytes are not read again (the error stands until the ETL or `etl doctor` replaces
    the file); the pages go on without it and say so."""

    fingerprint: Fingerprint
    error: str


def day_rollup(store: Path, day: dt.date, known: DayRollup | None, zone: str) -> DayRollup | Damage | None:
    """The day's rollup and series: `known` while its day file is unchanged, else the
    ETL's files for the current day file (the series in `zone` if there is one, else in
    the zone the ETL used), else summed here from the day file (files the ETL has not
    written yet, or a killed run left stale). None: the day file is gone."""
    source = rollup.Source.of(store, day)
    if source is None:
        return None
    fingerprint = (source.size, source.mtime_ns)
    if known is not None and known.fingerprint == fingerprint:
        return known
    timelines = source.series_paths(store)
    series_zone = zone if zone in timelines or not timelines else sorted(timelines)[0]
    try:
        rows = pq.read_table(source.rollup_path(store), read_dictionary=GROUPS)
        series = pq.read_table(timelines[series_zone], schema=rollup.SERIES_SCHEMA)
    except (OSError, KeyError, pa.ArrowException) as exc:
        if not isinstance(exc, FileNotFoundError | KeyError):  # derived data: the day file serves
            log.warning("could not read the rollups of %s (%s); summing its day file instead", day, exc)
        try:
            day_rows = rollup.read_day(source)
        except (OSError, pa.ArrowException) as damage:
            log.error("cannot read the day file %s (%s); its requests are left out", source.path, damage)
            return Damage(fingerprint, f"{type(damage).__name__}: {damage}")
        if day_rows is None:  # replaced while we looked: the next check picks up the new one
            return day_rollup(store, day, None, zone)
        rows = rollup.summarise(day_rows, day)
        series = rollup.series(day_rows, day, series_zone)
    return DayRollup(source.path, fingerprint, _compact(rows), series, series_zone)


def _merge_months(
    store: Path,
    rollups: dict[dt.date, DayRollup],
    months: dict[dt.date, MonthRollup],
    *,
    zone: str,
    days: list[dt.date],
    newest: dt.date,
) -> None:
    """Bring the month of `days` (all of one month) up to date with `rollups` (merged
    again when one of its day files changed), then let go of the rows of its days that
    are older than RECENT_DAYS before the `newest` day of the store."""
    present = [day for day in days if day in rollups]
    if not present:
        return
    month = month_of(present[0])
    sources = tuple((day, rollups[day].fingerprint) for day in present)
    known = months.get(month)
    if known is None or known.sources != sources:
        tables = [rows for day in present if (rows := rows_of(store, rollups[day], day, zone)) is not None]
        merged = rollup.merge(tables, month) if tables else rollup.ROLLUP_SCHEMA.empty_table()
        months[month] = MonthRollup(sources, _compact(merged))
    horizon = newest - dt.timedelta(days=RECENT_DAYS)
    for day in present:
        if day < horizon and rollups[day].rows is not None:
            rollups[day] = replace(rollups[day], rows=None)


def rows_of(store: Path, known: DayRollup, day: dt.date, zone: str) -> pa.Table | None:
    """A day's rollup rows: kept in memory, else read again (None: the day file is gone)."""
    if known.rows is not None:
        return known.rows
    again = day_rollup(store, day, None, zone)
    return again.rows if isinstance(again, DayRollup) else None


def _compact(rows: pa.Table) -> pa.Table:
    """The group columns dictionary-encoded: a few people, models and nodes repeated over
    thousands of rows (a 64-character key hash in every row, otherwise)."""
    for name in GROUPS:
        if not pa.types.is_dictionary(rows.schema.field(name).type):
            at = rows.schema.get_field_index(name)
            rows = rows.set_column(at, name, pc.dictionary_encode(rows[name]))
    return rows


# The rollup rows of the most recent days stay in memory (every rolling range up to two
# months reads them); older days are kept merged per month, and a range that covers an
# older month in part reads those days' rollup files.
RECENT_DAYS = 62


@dataclass(frozen=True)
class MonthRollup:
    """A calendar month's rollup rows merged over its days (`date` is the month's first
    day), and the day files they come from."""

    sources: tuple[tuple[dt.date, Fingerprint], ...]
    rows: pa.Table


def month_of(day: dt.date) -> dt.date:
    return day.replace(day=1)


def load(
    store: Path,
    rollups: dict[dt.date, DayRollup],
    months: dict[dt.date, MonthRollup],
    zone: str,
    damaged: dict[str, Damage],
) -> tuple[duckdb.DuckDBPyConnection, pa.Table]:
    """A new in-memory database over the store as it is now, with the small tables copied
    in and the views over the day files that each query points at its window; and the
    rollup rows of every month (`months`; `rollups` holds each day's series, and the rows
    of the recent days: both kept up to date here) as one Arrow table, which every cursor
    registers as `rollup_rows` (a registered table is the cursor's own). A file that
    cannot be read is left out and kept in `damaged` (by its path in the store)."""
    days = stored_days(store)
    for name in list(damaged):  # forget damage to files that were replaced or removed
        path = store / name
        if not path.is_file() or damaged[name].fingerprint != _fingerprint(path):
            del damaged[name]
    for aside in requests_dir(store).glob(f"date=*/{DAY_FILE}{SET_ASIDE}*"):  # etl/load.py
        damaged.setdefault(
            _relative(store, aside),
            Damage(_fingerprint(aside), "unreadable when the ETL last wrote its day: set aside"),
        )
    for day in set(rollups) - set(days):
        del rollups[day]
    # a first load reads a rollup file per day: in parallel, as reading Parquet frees the
    # GIL; a month at a time, merged before the next, so that a year is never all in memory
    by_month: dict[dt.date, list[dt.date]] = {}
    for day in days:
        by_month.setdefault(month_of(day), []).append(day)
    with ThreadPoolExecutor(LOAD_THREADS) as pool:
        for its_days in by_month.values():
            readable = [day for day in its_days if _relative(store, day_file(store, day)) not in damaged]
            found = pool.map(lambda day: day_rollup(store, day, rollups.get(day), zone), readable)
            for day, day_rows in zip(readable, found, strict=True):
                if isinstance(day_rows, Damage):
                    damaged[_relative(store, day_file(store, day))] = day_rows
                if not isinstance(day_rows, DayRollup):
                    rollups.pop(day, None)
                else:
                    rollups[day] = day_rows
            for day in set(its_days) - set(readable):
                rollups.pop(day, None)
            _merge_months(store, rollups, months, zone=zone, days=its_days, newest=days[-1])
    for month in set(months) - set(by_month):
        del months[month]
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    pa.default_memory_pool().release_unused()  # what reading the files took and let go
    tables = [months[month].rows for month in sorted(months)]
    rollup_rows = pa.concat_tables(tables) if tables else _compact(rollup.ROLLUP_SCHEMA.empty_table())
    con.register("rollup_rows", rollup_rows)
    con.register("window_rollups", rollup_rows)  # each cursor: the whole days of its window
    con.register("window_series", rollup.SERIES_SCHEMA.empty_table())  # likewise
    for table, file, schema in SNAPSHOT_TABLES:
        snapshot = _small_table(store, file, schema, damaged)
        con.register(f"{table}_source", snapshot)
        con.execute(f"CREATE TABLE {table} AS FROM {table}_source")
        con.unregister(f"{table}_source")
    months, lines, unreadable = statements.closed_tables(store)
    for folder, why in unreadable.items():
        log.error("cannot show the statement %s (%s); the pages go on without it", folder, why)
        damaged[folder] = Damage((0, 0), why)
    for table, rows in (("statement_months", months), ("closed_lines", lines)):
        con.register(f"{table}_source", rows)
        con.execute(f"CREATE TABLE {table} AS FROM {table}_source")
        con.unregister(f"{table}_source")
    con.register("bookmark_source", _bookmark(store))
    con.execute("CREATE TABLE bookmark AS FROM bookmark_source")
    con.unregister("bookmark_source")
    for statement in macro_statements():
        con.execute(statement)
    con.execute(identity.SQL_MACRO)
    # the views bind once here, on nothing: each cursor registers its window's cached days
    # and names the files of the others (queries/runner.py)
    for name in ("window", "edge"):
        con.register(f"{name}_cached", day_cache.SCHEMA.empty_table())
        con.execute(f"SET VARIABLE {name}_files = $f", {"f": [str(empty_day())]})
    con.execute(_requests_view("requests", "window", "*"))
    con.execute(_requests_view("edge_requests", "edge", ", ".join(_quote(g) for g in GROUPS)))
    con.execute(_requests_view("edge_series", "edge", SERIES_COLUMNS))
    for name, table in serving.empty_tables().items():  # each cursor: its window's whole days
        con.register(serving.PARTIAL_TABLES[name], table)
    con.execute("SET VARIABLE whole = $w", {"w": {"start": None, "stop": None}})
    con.execute(SETUP_SQL.read_text(encoding="utf-8"))
    for statement in serving.SERVING_STATEMENTS:
        con.execute(statement)
    return con, rollup_rows


# a single request shaped like a series row: its exact duration stands for a latency bin
SERIES_COLUMNS = (
    "(start_time AT TIME ZONE getvariable('filters').tz::VARCHAR)::DATE AS local_date, status, "
    "start_time, duration_ms::DOUBLE AS latency"
)


def _requests_view(name: str, days: str, columns: str) -> str:
    """Raw requests of some days: those in memory (the table `<days>_cached`) and those
    read from their files (the variable `<days>_files`), as `columns` (* or the columns of
    the rows they stand in for) with the values the store contract derives and every PART
    (and ROUTING_PART) of a single request, so that the measures of contract/measures.py
    read them as they read rollup rows (and the Nodes page's partials)."""
    derived = ", ".join(f"{sql} AS {_quote(column)}" for column, sql in DERIVED.items())
    parts = ", ".join(f"({p.sql})::{p.type} AS {p.name}" for p in (*PARTS, *ROUTING_PARTS))
    stored = ", ".join(_quote(c) for c in day_cache.COLUMNS)
    rows = (
        f"SELECT {stored} FROM {days}_cached UNION ALL "
        f"SELECT {stored} FROM read_parquet(getvariable('{days}_files'), union_by_name = true)"
    )
    user = 'user_identity(user_id, key_alias, "user", api_key_hash) AS "user"'
    return (
        f"CREATE VIEW {name} AS SELECT {columns}, {parts} "
        f"FROM (SELECT * REPLACE ({user}), {derived} FROM ({rows}))"
    )


def _small_table(store: Path, file: str, schema: pa.Schema, damaged: dict[str, Damage]) -> pa.Table:
    """keys, users, etl_runs: empty when absent, or when damaged (kept in `damaged`)."""
    path = store / file
    if not path.is_file() or file in damaged:
        return schema.empty_table()
    try:
        return _read(path, schema.names, schema)
    except (OSError, pa.ArrowException) as damage:
        log.error("cannot read %s (%s); the pages go on without it", path, damage)
        damaged[file] = Damage(_fingerprint(path), f"{type(damage).__name__}: {damage}")
        return schema.empty_table()


def _fingerprint(path: Path) -> Fingerprint:
    try:
        stat = path.stat()
    except OSError:
        return (-1, -1)
    return (stat.st_size, stat.st_mtime_ns)


def _relative(store: Path, path: Path) -> str:
    return path.relative_to(store).as_posix()


def _read(path: Path, columns: list[str], schema: pa.Schema) -> pa.Table:
    """The file's `columns`, read through one open handle; a column an older store did
    not write reads as NULL (the store contract lets columns be added)."""
    with path.open("rb") as handle:
        names = set(pq.ParquetFile(handle).schema_arrow.names)
        present = [c for c in columns if c in names]
        handle.seek(0)
        table = pq.ParquetFile(handle).read(columns=present)
    arrays = [table[c] if c in present else pa.nulls(table.num_rows, schema.field(c).type) for c in columns]
    fields = [schema.field(c).with_type(a.type) for c, a in zip(columns, arrays, strict=True)]
    return pa.table(arrays, schema=pa.schema(fields)).cast(pa.schema([schema.field(c) for c in columns]))


def _bookmark(store: Path) -> pa.Table:
    """state.json as a table: one row per source the store was copied from (none yet: no
    row). An unreadable bookmark is the ETL's to report; here it reads as no row."""
    try:
        state = read_state(store)
    except StoreCorrupt:
        state = State()
    rows = [] if state.source is None else [state]
    return pa.Table.from_pylist(
        [
            {
                "source": r.source,
                "cursor_column": r.cursor_column,
                "cursor": r.cursor.replace(tzinfo=dt.UTC) if r.cursor else None,
                "start_max": r.start_max.replace(tzinfo=dt.UTC) if r.start_max else None,
                "full_refresh_pending": r.full_refresh_pending,
            }
            for r in rows
        ],
        schema=BOOKMARK_SCHEMA,
    )


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
