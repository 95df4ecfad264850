"""An in-memory DuckDB copy of the store at one moment: what every query reads.

The requests are loaded once per store version, with their dimensions typed as ENUMs
and the derived per-request values (streamed, time to first token, output speed, the
15-minute slot) computed once. On this 2-core machine that makes a grouped aggregate
over a million requests ~5 ms instead of ~35 ms straight from Parquet, so the whole
overview stays well inside its budget. The cost is memory: see the README.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from etl.errors import StoreCorrupt
from etl.state import State, read_state
from etl.store import (
    DAY_FILE,
    KEYS_FILE,
    KEYS_SCHEMA,
    REQUESTS_FILE_SCHEMA,
    RUNS_FILE,
    RUNS_SCHEMA,
    STATE_FILE,
    USERS_FILE,
    USERS_SCHEMA,
    UTC_TS,
    requests_dir,
)
from queries.metrics import macro_statements

SETUP_SQL = Path(__file__).parent / "setup" / "views.sql"

# Dimensions with few distinct values: ENUM-typed, they group and filter as integers.
CATEGORICAL = (
    "user",
    "user_id",
    "key_alias",
    "team_id",
    "end_user",
    "api_key_hash",
    "model",
    "model_group",
    "model_id",
    "provider",
    "api_base",
    "node",
    "user_agent",
    "client",
    "call_type",
    "status",
    "error_class",
)
# Per-request values the store contract derives at query time, computed once here.
# Microseconds throughout: DuckDB's epoch_ms rounds, which moved requests into the next
# 15-minute slot and made sub-millisecond generation times a division by zero.
# Output speed is measured only on streamed answers long enough to time: at least
# SPEED_MIN_TOKENS completion tokens over at least SPEED_MIN_MS after the first token
# (a 3-token answer in 4 ms is not "750 tokens/s"). The others count as too_short.
SPEED_MIN_TOKENS = 16
SPEED_MIN_MS = 200
_GENERATION_US = "(epoch_us(end_time) - epoch_us(completion_start_time))"
_MEASURABLE = (
    f"completion_start_time < end_time AND completion_tokens >= {SPEED_MIN_TOKENS} "
    f"AND {_GENERATION_US} >= {SPEED_MIN_MS * 1000}"
)
DERIVED = {
    "rid": "row_number() OVER ()",  # a row's identity within the snapshot
    "streamed": "completion_start_time < end_time",
    "ttft_ms": "CASE WHEN completion_start_time < end_time "
    "THEN (epoch_us(completion_start_time) - epoch_us(start_time)) / 1000.0 END",
    "output_tps": f"CASE WHEN {_MEASURABLE} THEN completion_tokens * 1e6 / {_GENERATION_US} END",
    "too_short": f"completion_start_time < end_time AND NOT ({_MEASURABLE})",
    "q15": "epoch_us(start_time) // 900000000",
}
# Never needed by an aggregate, and the bulk of the memory: left on disk.
LEFT_OUT = ("request_id", "session_id", "request_tags")
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


def day_files(store: Path) -> list[Path]:
    return sorted(requests_dir(store).glob(f"date=*/{DAY_FILE}"))


def version(store: Path) -> tuple[tuple[str, int, int], ...]:
    """Changes whenever the ETL replaces a file the snapshot reads."""
    paths = [*day_files(store), *(store / file for _, file, _ in SNAPSHOT_TABLES), store / STATE_FILE]
    out = []
    for path in paths:
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        out.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


def load(store: Path) -> duckdb.DuckDBPyConnection:
    """A new in-memory database holding the store as it is now."""
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = false")
    # Each file is read through one open handle: the ETL may rename a new version over a
    # day file at any moment, and a reader that opens the path twice can mix two versions.
    columns = [name for name in REQUESTS_FILE_SCHEMA.names if name not in LEFT_OUT]
    tables = [_read(path, columns) for path in day_files(store)]
    source = pa.concat_tables(tables) if tables else REQUESTS_FILE_SCHEMA.empty_table().select(columns)
    con.register("source_rows", source)
    casts = []
    for column in CATEGORICAL:
        name, enum = _quote(column), _quote(f"{column}_t")
        con.execute(
            f"CREATE TYPE {enum} AS ENUM (SELECT DISTINCT {name} FROM source_rows WHERE {name} IS NOT NULL)"
        )
        casts.append(f"{name}::{enum} AS {name}")
    derived = [f"{sql} AS {_quote(name)}" for name, sql in DERIVED.items()]
    con.execute(
        f"CREATE TABLE facts AS SELECT * REPLACE ({', '.join(casts)}), {', '.join(derived)} FROM source_rows"
    )
    con.unregister("source_rows")
    del source, tables
    pa.default_memory_pool().release_unused()  # the Arrow copy is gone; give its memory back
    for table, file, schema in SNAPSHOT_TABLES:
        path = store / file
        snapshot = _read(path, schema.names, schema) if path.is_file() else schema.empty_table()
        con.register(f"{table}_source", snapshot)
        con.execute(f"CREATE TABLE {table} AS FROM {table}_source")
        con.unregister(f"{table}_source")
    con.register("bookmark_source", _bookmark(store))
    con.execute("CREATE TABLE bookmark AS FROM bookmark_source")
    con.unregister("bookmark_source")
    for statement in macro_statements():
        con.execute(statement)
    con.execute(SETUP_SQL.read_text(encoding="utf-8"))
    return con


def _read(path: Path, columns: list[str], schema: pa.Schema = REQUESTS_FILE_SCHEMA) -> pa.Table:
    """The file's `columns`, read through one open handle; a column an older store did
    not write reads as NULL (the store contract lets columns be added)."""
    with path.open("rb") as handle:
        names = set(pq.ParquetFile(handle).schema_arrow.names)
        present = [c for c in columns if c in names]
        handle.seek(0)
        dictionaries = [c for c in CATEGORICAL if c in present]
        table = pq.ParquetFile(handle, read_dictionary=dictionaries).read(columns=present)
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


def _names(identifiers: tuple[str, ...]) -> str:
    return ", ".join(_quote(i) for i in identifiers)
