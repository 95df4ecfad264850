"""Extract: LiteLLM spend-log rows as Arrow tables of one fixed shape (`RAW_SCHEMA`).

Two sources produce that shape: PostgreSQL (`read_spend_logs`, JSON fields picked out in
SQL, streamed through a server-side cursor) and Python dicts shaped like LiteLLM's rows
(`table_from_rows`, for tests and the demo). The JSON paths are declared once, in
`METADATA_TEXT` (and `METADATA_WORDS`, `METADATA_NUMBERS`), and both sources follow them.
Prompts and responses (`messages`, `response`, `proxy_server_request`) are never selected.

This module holds the two sources. The rest of the extract is re-exported from here:
extract_sql.py (the columns, the JSON paths and the SELECT), extract_source.py (the
database's URL, the connection, the catalog) and extract_snapshots.py (keys and users).
"""

from __future__ import annotations

import datetime as dt
import json
import queue
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import psycopg
import pyarrow as pa
from psycopg import sql

from etl.errors import SourceDataError
from etl.extract_snapshots import (
    EXPIRED_LONG_AGO,
    KEYS_TABLE,
    USERS_TABLE,
    Snapshot,
    read_keys,
    read_users,
)
from etl.extract_source import (
    STATEMENT_TIMEOUT_MS,
    connect,
    describe_source,
    first_line,
    inspect_source,
    parse_source_url,
    source_fingerprint,
)
from etl.extract_sql import (
    _JSON_TYPES,
    _PLAIN_COLUMNS,
    METADATA_NUMBERS,
    METADATA_TAGS_PATH,
    METADATA_TEXT,
    METADATA_WORDS,
    RAW_SCHEMA,
    REQUIRED_COLUMNS,
    SPEND_LOGS,
    SourceInfo,
    Window,
    spend_logs_query,
)

__all__ = [
    "EXPIRED_LONG_AGO",
    "KEYS_TABLE",
    "METADATA_NUMBERS",
    "METADATA_TAGS_PATH",
    "METADATA_TEXT",
    "METADATA_WORDS",
    "RAW_SCHEMA",
    "REQUIRED_COLUMNS",
    "SPEND_LOGS",
    "STATEMENT_TIMEOUT_MS",
    "USERS_TABLE",
    "Snapshot",
    "SourceInfo",
    "Window",
    "connect",
    "describe_source",
    "first_line",
    "inspect_source",
    "parse_source_url",
    "read_keys",
    "read_spend_logs",
    "read_users",
    "source_fingerprint",
    "spend_logs_query",
    "table_from_rows",
    "unreadable_value",
]


# --- reading --------------------------------------------------------------------------


_CURSOR = sql.Identifier("spend_logs_extract")


def read_spend_logs(
    conn: psycopg.Connection[Any], info: SourceInfo, window: Window | None, chunk_rows: int
) -> Iterator[pa.Table]:
    """Stream the window's rows as `RAW_SCHEMA` tables of at most `chunk_rows` rows,
    through a server-side cursor (DECLARE ... / FETCH FORWARD n).

    PostgreSQL computes a chunk only when asked for it, and most of its work here is
    de-toasting metadata. A helper thread therefore asks for chunk k+1 while the caller
    converts and transforms chunk k, so both cores work. At most three chunks are held:
    one being fetched, one fetched, one with the caller.
    """
    if conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE:
        conn.execute("BEGIN")  # a cursor lives in a transaction
    query, params = spend_logs_query(info, window)
    conn.execute(sql.SQL("DECLARE {} NO SCROLL CURSOR FOR {}").format(_CURSOR, query), params)
    fetch = sql.SQL("FETCH FORWARD {} FROM {}").format(sql.Literal(chunk_rows), _CURSOR)
    free: queue.Queue[Any] = queue.Queue()  # cursors, or _DONE to stop the helper
    for _ in range(2):
        free.put(conn.cursor(binary=True))
    ready: queue.Queue[Any] = queue.Queue()
    stop = threading.Event()

    def produce() -> None:
        try:
            while not stop.is_set():
                cur = free.get()
                if cur is _DONE:
                    break
                cur.execute(fetch)
                if cur.rowcount <= 0:
                    break
                ready.put(cur)
            ready.put(_DONE)
        except BaseException as exc:  # handed to the consumer, raised there
            ready.put(exc)

    worker = threading.Thread(target=produce, name="spend-logs-fetch", daemon=True)
    worker.start()
    try:
        while (item := ready.get()) is not _DONE:
            if isinstance(item, BaseException):
                raise item
            table = _table_from_tuples(item.fetchall())
            free.put(item)
            yield table
    finally:
        stop.set()
        free.put(_DONE)  # wake a helper waiting for a cursor; never touch a dead connection
        worker.join()
    conn.execute(sql.SQL("CLOSE {}").format(_CURSOR))


_DONE = object()


def _table_from_tuples(rows: list[tuple[Any, ...]]) -> pa.Table:
    if not rows:
        return RAW_SCHEMA.empty_table()
    columns = list(zip(*rows, strict=True))
    return pa.table(
        [pa.array(col, type=field.type) for col, field in zip(columns, RAW_SCHEMA, strict=True)],
        schema=RAW_SCHEMA,
    )


def unreadable_value(info: SourceInfo, exc: BaseException) -> SourceDataError:
    """The error for a value PostgreSQL itself cannot convert while the rows are read."""
    as_json = [
        f"{column} ({info.type_of(column)})"
        for column in ("metadata", "request_tags")
        if info.type_of(column) in _JSON_TYPES - {"jsonb"}
    ]
    if as_json:
        advice = (
            f"This table keeps {' and '.join(as_json)} as text, which the ETL parses as JSON: "
            "correct or delete the row whose value is not JSON (LiteLLM itself stores jsonb)"
        )
    else:
        advice = "Correct or delete the row holding it, then run again"
    return SourceDataError(f"a value in {SPEND_LOGS} cannot be read: {first_line(exc)}. {advice}.")


# --- rows from Python -------------------------------------------------------------------


def table_from_rows(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """`RAW_SCHEMA` from dicts with LiteLLM's column names, as the SQL above would read them.

    `metadata` and `request_tags` may be Python objects or JSON text; timestamps may be
    datetimes or ISO strings (naive, meaning UTC, as LiteLLM stores them).
    """
    out: list[tuple[Any, ...]] = []
    for row in rows:
        values: list[Any] = []
        unreadable: list[str] = []
        for _, column, typ, _ in _PLAIN_COLUMNS:
            try:
                value = _python_value(row.get(column), typ)
            except (ValueError, TypeError, OverflowError):  # as the SQL reads what it cannot convert
                value = None
                unreadable.append(column)
            values.append(value)
        tags = _json_value(row.get("request_tags", []))
        metadata = _json_value(row.get("metadata", {}))
        md_tags = _json_path(metadata, METADATA_TAGS_PATH)
        values += [
            _array_texts(tags),
            _json_type(tags),
            _json_type(metadata),
            _array_texts(md_tags),
        ]
        values += [_json_text(_json_path(metadata, path)) for path in METADATA_TEXT.values()]
        values += [_word(_json_path(metadata, path), pattern) for path, pattern in METADATA_WORDS.values()]
        values += [_json_dump(_json_path(metadata, path)) for path in METADATA_NUMBERS.values()]
        # rows from Python are not checked for copies on other days: their source is a test
        # or the simulator, which write each request once
        values += [unreadable or None, False]
        out.append(tuple(values))
    return _table_from_tuples(out)


def _python_value(value: Any, typ: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_timestamp(typ) and isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    if pa.types.is_integer(typ):
        number = int(value)
        if not -(2**63) <= number < 2**63:
            raise OverflowError(number)
        return number
    if pa.types.is_floating(typ):
        return float(value)
    if pa.types.is_string(typ) and not isinstance(value, str):
        return str(value)
    return value


_MISSING = object()


def _json_value(value: Any) -> Any:
    if isinstance(value, str | bytes):
        try:
            return json.loads(value)
        except ValueError:
            return value  # PostgreSQL would hold it as a JSON string
    return value


def _json_path(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return _MISSING
        value = value[key]
    return value


def _json_type(value: Any) -> str | None:
    """`jsonb_typeof`; a missing value or Python None stands for SQL NULL."""
    match value:
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
        case dict():
            return "object"
    return None


def _json_text(value: Any) -> str | None:
    """`#>>`: strings unquoted, JSON null and missing paths as NULL, the rest as JSON text."""
    if value is _MISSING or value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _json_dump(value: Any) -> str | None:
    """`NULLIF((md.m #> path)::text, 'null')`: the value as JSON text, strings quoted."""
    if value is _MISSING or value is None:
        return None
    return json.dumps(value, ensure_ascii=False)


def _word(value: Any, pattern: str) -> str | None:
    """`substring(md.m #>> path from pattern)`: the group of the pattern in the value as `#>>`
    reads it; NULL when there is no match."""
    text = _json_text(value)
    found = re.search(pattern, text) if text is not None else None
    return found.group(1) if found else None


def _array_texts(value: Any) -> list[str | None] | None:
    """`ARRAY(SELECT jsonb_array_elements_text(...))` for arrays, NULL otherwise."""
    if not isinstance(value, list):
        return None
    return [_json_text(item) for item in value]
