"""Extract: LiteLLM spend-log rows as Arrow tables of one fixed shape (`RAW_SCHEMA`).

Two sources produce that shape: PostgreSQL (`read_spend_logs`, JSON fields picked out in
SQL, streamed through a server-side cursor) and Python dicts shaped like LiteLLM's rows
(`table_from_rows`, for tests and the demo). The JSON paths are declared once, in
`METADATA_TEXT`, and both sources follow them. Prompts and responses (`messages`,
`response`, `proxy_server_request`) are never selected.
"""

from __future__ import annotations

import datetime as dt
import json
import queue
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import psycopg
import pyarrow as pa
from psycopg import sql
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from etl.errors import ConfigError, SourceTableMissing, SourceUnreachable
from etl.store import KEYS_SCHEMA, USERS_SCHEMA

SPEND_LOGS = "LiteLLM_SpendLogs"

# metadata JSON paths, read as text (`#>>`): the transform parses and validates them.
METADATA_TEXT: dict[str, tuple[str, ...]] = {
    "md_user_agent": ("user_agent",),
    "md_key_alias": ("user_api_key_alias",),
    "md_user_id": ("user_api_key_user_id",),
    "md_team_id": ("user_api_key_team_id",),
    "md_status": ("status",),
    "md_error_class": ("error_information", "error_class"),
    "md_cached_uo": ("usage_object", "prompt_tokens_details", "cached_tokens"),
    "md_cached_auv": ("additional_usage_values", "prompt_tokens_details", "cached_tokens"),
    "md_cache_read_auv": ("additional_usage_values", "cache_read_input_tokens"),
    "md_cache_creation_uo": ("usage_object", "cache_creation_input_tokens"),
    "md_cache_creation_auv": ("additional_usage_values", "cache_creation_input_tokens"),
    "md_reasoning_uo": ("usage_object", "completion_tokens_details", "reasoning_tokens"),
    "md_reasoning_auv": ("additional_usage_values", "completion_tokens_details", "reasoning_tokens"),
}
METADATA_TAGS_PATH = ("tags",)

# (raw name, LiteLLM column, Arrow type, PostgreSQL type used when the column is missing)
_PLAIN_COLUMNS: list[tuple[str, str, pa.DataType, str]] = [
    ("request_id", "request_id", pa.string(), "text"),
    ("call_type", "call_type", pa.string(), "text"),
    ("api_key", "api_key", pa.string(), "text"),
    ("spend", "spend", pa.float64(), "float8"),
    ("prompt_tokens", "prompt_tokens", pa.int64(), "int8"),
    ("completion_tokens", "completion_tokens", pa.int64(), "int8"),
    ("total_tokens", "total_tokens", pa.int64(), "int8"),
    ("start_time", "startTime", pa.timestamp("us"), "timestamp"),
    ("end_time", "endTime", pa.timestamp("us"), "timestamp"),
    ("completion_start_time", "completionStartTime", pa.timestamp("us"), "timestamp"),
    ("created_at", "created_at", pa.timestamp("us"), "timestamp"),
    ("request_duration_ms", "request_duration_ms", pa.int64(), "int8"),
    ("model", "model", pa.string(), "text"),
    ("model_id", "model_id", pa.string(), "text"),
    ("model_group", "model_group", pa.string(), "text"),
    ("custom_llm_provider", "custom_llm_provider", pa.string(), "text"),
    ("api_base", "api_base", pa.string(), "text"),
    ("user", "user", pa.string(), "text"),
    ("cache_hit", "cache_hit", pa.string(), "text"),
    ("team_id", "team_id", pa.string(), "text"),
    ("end_user", "end_user", pa.string(), "text"),
    ("session_id", "session_id", pa.string(), "text"),
    ("status", "status", pa.string(), "text"),
]
# Columns every LiteLLM release since the baseline migration has.
REQUIRED_COLUMNS = frozenset({"request_id", "api_key", "startTime", "endTime", "metadata", "request_tags"})

RAW_SCHEMA = pa.schema(
    [(raw, typ) for raw, _, typ, _ in _PLAIN_COLUMNS]
    + [
        ("request_tags", pa.list_(pa.string())),
        ("request_tags_type", pa.string()),
        ("metadata_type", pa.string()),
        ("md_tags", pa.list_(pa.string())),
    ]
    + [(name, pa.string()) for name in METADATA_TEXT]
)


@dataclass(frozen=True)
class SourceInfo:
    """What this LiteLLM database's spend-log table offers."""

    columns: frozenset[str]
    created_at_indexed: bool
    estimated_rows: int

    @property
    def has_created_at(self) -> bool:
        return "created_at" in self.columns


@dataclass(frozen=True)
class Window:
    """Which rows to read: those whose `cursor` column lies in [cursor_from, cursor_to]
    (either end open when None).

    `start_floor` bounds startTime as well so that PostgreSQL can use its startTime
    index when created_at has none (created_at is never indexed by LiteLLM).
    """

    cursor: str  # "created_at" | "startTime"
    cursor_from: dt.datetime | None = None
    cursor_to: dt.datetime | None = None
    start_floor: dt.datetime | None = None


# --- connecting ---------------------------------------------------------------------

# Prisma's URL options, which LiteLLM's DATABASE_URL may carry and libpq rejects.
_PRISMA_ONLY = {"connection_limit", "pool_timeout", "pgbouncer", "socket_timeout", "statement_cache_size"}


def parse_source_url(url: str) -> URL:
    """Parse a SQLAlchemy / libpq / Prisma PostgreSQL URL; reject anything else clearly."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(
            "--source is not a database URL; expected postgresql://user:password@host:5432/litellm"
        ) from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend not in ("postgresql", "postgres") or driver not in ("", "psycopg"):
        raise ConfigError(
            f"--source must be a PostgreSQL URL (postgresql:// or postgresql+psycopg://), "
            f"not {parsed.drivername}://"
        )
    if parsed.host and "@" in parsed.host:
        # an unencoded "@" in the password: part of it would be taken for the host
        raise ConfigError(
            "--source has an unencoded '@' (in the password?): write it as %40, "
            "e.g. postgresql://user:p%40ss@host:5432/litellm"
        )
    return parsed


def describe_source(url: URL) -> str:
    """user@host:port/database: no password, no query options (which may carry one)."""
    user = f"{url.username}@" if url.username else ""
    port = f":{url.port}" if url.port else ""
    return f"postgresql://{user}{url.host or 'localhost'}{port}/{url.database or ''}"


def source_fingerprint(url: URL) -> str:
    """Which database this is, independent of credentials: the bookmark belongs to it."""
    return f"{url.host or 'localhost'}:{url.port or 5432}/{url.database or ''}"


# A FETCH that takes this long means something is stuck; so does a silent network.
STATEMENT_TIMEOUT_MS = 10 * 60 * 1000
_SESSION = {
    "connect_timeout": "10",
    "application_name": "litellm-usage-etl",
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",
}


def connect(url: URL) -> psycopg.Connection[Any]:
    """A read-only connection to the LiteLLM database that gives up instead of hanging."""
    query = {k: v if isinstance(v, str) else v[-1] for k, v in url.query.items() if k not in _PRISMA_ONLY}
    options = [query.pop("options")] if "options" in query else []
    options.append(f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")
    if schema := query.pop("schema", None):
        options.append(f"-c search_path={schema}")
    base = url.set(drivername="postgresql", query={}).render_as_string(hide_password=False)
    conninfo = make_conninfo(base, **{**_SESSION, **query, "options": " ".join(options)})
    try:
        conn = psycopg.connect(conninfo)
    except psycopg.Error as exc:
        raise SourceUnreachable(
            f"cannot connect to the LiteLLM database {describe_source(url)}: {first_line(exc)}. "
            "Is PostgreSQL running, and is --source (or LITELLM_DATABASE_URL) right?"
        ) from None
    conn.read_only = True
    return conn


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def inspect_source(conn: psycopg.Connection[Any], database: str) -> SourceInfo:
    columns = _columns(conn, SPEND_LOGS)
    if not columns:
        raise SourceTableMissing(
            f"no table {SPEND_LOGS} in database {database}: is --source the LiteLLM database "
            "(the one in LiteLLM's DATABASE_URL), and has the proxy run its migrations?"
        )
    missing = REQUIRED_COLUMNS - columns
    if missing:
        raise SourceTableMissing(
            f"table {SPEND_LOGS} in database {database} lacks column(s) {', '.join(sorted(missing))}: "
            "it is not a LiteLLM spend-log table this ETL understands"
        )
    row = conn.execute(
        "SELECT c.reltuples, EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a "
        "ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
        "WHERE i.indrelid = c.oid AND a.attname = 'created_at') "
        "FROM pg_class c WHERE c.oid = to_regclass(%s)",
        [_regclass(SPEND_LOGS)],
    ).fetchone()
    reltuples, indexed = row if row else (0, False)
    return SourceInfo(
        columns=columns,
        created_at_indexed=bool(indexed),
        estimated_rows=max(int(reltuples or 0), 0),
    )


# --- reading --------------------------------------------------------------------------


def spend_logs_query(info: SourceInfo, window: Window | None) -> tuple[sql.Composed, dict[str, Any]]:
    """The extraction SELECT for this table's columns and the window to read."""
    items: list[sql.Composable] = []
    for raw, column, _, pg_type in _PLAIN_COLUMNS:
        if column in info.columns:
            expr: sql.Composable = sql.SQL("s.{}").format(sql.Identifier(column))
            if pg_type in ("int8", "text"):
                expr = sql.SQL("{}::{}").format(expr, sql.SQL(pg_type))
        else:
            expr = sql.SQL("NULL::{}").format(sql.SQL(pg_type))
        items.append(sql.SQL("{} AS {}").format(expr, sql.Identifier(raw)))
    items += [
        sql.SQL(
            "CASE jsonb_typeof(s.request_tags) WHEN 'array' THEN "
            "ARRAY(SELECT jsonb_array_elements_text(s.request_tags)) END AS request_tags"
        ),
        sql.SQL("jsonb_typeof(s.request_tags) AS request_tags_type"),
        sql.SQL("jsonb_typeof(md.m) AS metadata_type"),
        sql.SQL(
            "CASE jsonb_typeof(md.m #> {p}) WHEN 'array' THEN "
            "ARRAY(SELECT jsonb_array_elements_text(md.m #> {p})) END AS md_tags"
        ).format(p=sql.Literal(list(METADATA_TAGS_PATH))),
    ]
    for name, path in METADATA_TEXT.items():
        items.append(sql.SQL("md.m #>> {} AS {}").format(sql.Literal(list(path)), sql.Identifier(name)))

    # metadata is ~10 KB of TOASTed JSON per row, and PostgreSQL de-toasts it again for
    # every path read from the column. `#> '{}'` returns the de-toasted value itself; the
    # lateral subquery (kept apart by OFFSET 0) hands that one copy to all the paths
    # above: 13 paths then cost about what one does (measured: 10x less than reading the
    # column directly). COALESCE covers old PostgreSQL releases where `#> '{}'` is NULL.
    query = sql.SQL(
        "SELECT {items} FROM {table} s CROSS JOIN LATERAL "
        "(SELECT COALESCE(s.metadata #> '{{}}', s.metadata) AS m OFFSET 0) md"
    ).format(items=sql.SQL(", ").join(items), table=sql.Identifier(SPEND_LOGS))
    params: dict[str, Any] = {}
    conditions: list[sql.Composable] = []
    if window is not None and window.cursor_from is not None:
        conditions.append(sql.SQL("s.{} >= %(cursor_from)s").format(sql.Identifier(window.cursor)))
        params["cursor_from"] = window.cursor_from
    if window is not None and window.cursor_to is not None:
        conditions.append(sql.SQL("s.{} <= %(cursor_to)s").format(sql.Identifier(window.cursor)))
        params["cursor_to"] = window.cursor_to
    if window is not None and window.start_floor is not None:
        conditions.append(sql.SQL('s."startTime" >= %(start_floor)s'))
        params["start_floor"] = window.start_floor
    if conditions:
        query = sql.SQL("{} WHERE {}").format(query, sql.SQL(" AND ").join(conditions))
    return query, params


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


# --- snapshots of keys and users ----------------------------------------------------

# (store column, source expression or column, PostgreSQL type); budget-table values fill
# in where a key carries a budget_id instead of its own limits.
_KEY_COLUMNS: list[tuple[str, str, str]] = [
    ("api_key_hash", "token", "text"),
    ("key_name", "key_name", "text"),
    ("key_alias", "key_alias", "text"),
    ("user_id", "user_id", "text"),
    ("team_id", "team_id", "text"),
    ("spend", "spend", "float8"),
    ("max_budget", "max_budget", "float8"),
    ("budget_duration", "budget_duration", "text"),
    ("budget_reset_at", "budget_reset_at", "timestamp"),
    ("tpm_limit", "tpm_limit", "int8"),
    ("rpm_limit", "rpm_limit", "int8"),
    ("expires", "expires", "timestamp"),
    ("blocked", "blocked", "bool"),
    ("created_at", "created_at", "timestamp"),
    ("last_active", "last_active", "timestamp"),
]
_KEY_BUDGET_FALLBACK = ("max_budget", "budget_duration", "tpm_limit", "rpm_limit")
# The user table's password, email-verification and SSO fields are never read.
_USER_COLUMNS: list[tuple[str, str, str]] = [
    ("user_id", "user_id", "text"),
    ("user_alias", "user_alias", "text"),
    ("user_email", "user_email", "text"),
    ("user_role", "user_role", "text"),
    ("spend", "spend", "float8"),
    ("max_budget", "max_budget", "float8"),
    ("budget_duration", "budget_duration", "text"),
    ("budget_reset_at", "budget_reset_at", "timestamp"),
    ("tpm_limit", "tpm_limit", "int8"),
    ("rpm_limit", "rpm_limit", "int8"),
    ("created_at", "created_at", "timestamp"),
]


def read_keys(conn: psycopg.Connection[Any], snapshot_at: dt.datetime) -> pa.Table:
    """`LiteLLM_VerificationToken` as `KEYS_SCHEMA`: hashes only, LiteLLM never has the key."""
    columns = _columns(conn, "LiteLLM_VerificationToken")
    budget = _columns(conn, "LiteLLM_BudgetTable") if "budget_id" in columns else frozenset()
    items: list[sql.Composable] = []
    for name, column, pg_type in _KEY_COLUMNS:
        expr: sql.Composable = (
            sql.SQL("k.{}").format(sql.Identifier(column)) if column in columns else sql.SQL("NULL")
        )
        if name in _KEY_BUDGET_FALLBACK and column in budget:
            expr = sql.SQL("COALESCE({}, b.{})").format(expr, sql.Identifier(column))
        items.append(sql.SQL("{}::{} AS {}").format(expr, sql.SQL(pg_type), sql.Identifier(name)))
    join = (
        sql.SQL(' LEFT JOIN "LiteLLM_BudgetTable" b ON b.budget_id = k.budget_id') if budget else sql.SQL("")
    )
    query = sql.SQL('SELECT {} FROM "LiteLLM_VerificationToken" k{} ORDER BY 1').format(
        sql.SQL(", ").join(items), join
    )
    return _snapshot(conn, query, columns, KEYS_SCHEMA, snapshot_at)


def read_users(conn: psycopg.Connection[Any], snapshot_at: dt.datetime) -> pa.Table:
    """`LiteLLM_UserTable` as `USERS_SCHEMA`."""
    columns = _columns(conn, "LiteLLM_UserTable")
    items = [
        sql.SQL("{}::{} AS {}").format(
            sql.SQL("u.{}").format(sql.Identifier(column)) if column in columns else sql.SQL("NULL"),
            sql.SQL(pg_type),
            sql.Identifier(name),
        )
        for name, column, pg_type in _USER_COLUMNS
    ]
    query = sql.SQL('SELECT {} FROM "LiteLLM_UserTable" u ORDER BY 1').format(sql.SQL(", ").join(items))
    return _snapshot(conn, query, columns, USERS_SCHEMA, snapshot_at)


def _columns(conn: psycopg.Connection[Any], table: str) -> frozenset[str]:
    """The table's columns (in the connection's search_path); empty if there is no table."""
    rows = conn.execute(
        "SELECT attname FROM pg_attribute "
        "WHERE attrelid = to_regclass(%s) AND attnum > 0 AND NOT attisdropped",
        [_regclass(table)],
    ).fetchall()
    return frozenset(r[0] for r in rows)


def _regclass(table: str) -> str:
    return '"' + table.replace('"', '""') + '"'


def _snapshot(
    conn: psycopg.Connection[Any],
    query: sql.Composed,
    columns: frozenset[str],
    schema: pa.Schema,
    snapshot_at: dt.datetime,
) -> pa.Table:
    if not columns:  # a release without this table: an empty snapshot, not an error
        return schema.empty_table()
    rows = conn.execute(query).fetchall()
    data = list(zip(*rows, strict=True)) if rows else [()] * (len(schema) - 1)
    arrays = []
    for values, f in zip(data, schema, strict=False):
        naive = pa.timestamp("us") if pa.types.is_timestamp(f.type) else f.type
        arrays.append(pa.array(values, type=naive).cast(f.type))
    arrays.append(pa.repeat(pa.scalar(snapshot_at, schema.field("snapshot_at").type), len(rows)))
    return pa.table(arrays, schema=schema)


# --- rows from Python -------------------------------------------------------------------


def table_from_rows(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """`RAW_SCHEMA` from dicts with LiteLLM's column names, as the SQL above would read them.

    `metadata` and `request_tags` may be Python objects or JSON text; timestamps may be
    datetimes or ISO strings (naive, meaning UTC, as LiteLLM stores them).
    """
    out: list[tuple[Any, ...]] = []
    for row in rows:
        values: list[Any] = []
        for _, column, typ, _ in _PLAIN_COLUMNS:
            value = row.get(column)
            if pa.types.is_timestamp(typ) and isinstance(value, str):
                value = dt.datetime.fromisoformat(value)
            elif pa.types.is_integer(typ) and value is not None:
                value = int(value)
            elif pa.types.is_floating(typ) and value is not None:
                value = float(value)
            elif pa.types.is_string(typ) and value is not None and not isinstance(value, str):
                value = str(value)
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
        out.append(tuple(values))
    return _table_from_tuples(out)


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


def _array_texts(value: Any) -> list[str | None] | None:
    """`ARRAY(SELECT jsonb_array_elements_text(...))` for arrays, NULL otherwise."""
    if not isinstance(value, list):
        return None
    return [_json_text(item) for item in value]
