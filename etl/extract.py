"""Extract: LiteLLM spend-log rows as Arrow tables of one fixed shape (`RAW_SCHEMA`).

Two sources produce that shape: PostgreSQL (`read_spend_logs`, JSON fields picked out in
SQL, streamed through a server-side cursor) and Python dicts shaped like LiteLLM's rows
(`table_from_rows`, for tests and the demo). The JSON paths are declared once, in
`METADATA_TEXT` (and `METADATA_WORDS`, `METADATA_NUMBERS`), and both sources follow them.
Prompts and responses (`messages`, `response`, `proxy_server_request`) are never selected.
"""

from __future__ import annotations

import datetime as dt
import json
import queue
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import psycopg
import pyarrow as pa
from psycopg import sql
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from contract.store import KEYS_SCHEMA, USERS_SCHEMA
from etl.errors import SourceDataError, SourceTableMissing, SourceUnreachable
from settings.errors import ConfigError

SPEND_LOGS = "LiteLLM_SpendLogs"

# metadata JSON paths, read as text (`#>>`): the transform parses and validates them.
METADATA_TEXT: dict[str, tuple[str, ...]] = {
    "md_user_agent": ("user_agent",),
    "md_key_alias": ("user_api_key_alias",),
    "md_user_id": ("user_api_key_user_id",),
    "md_team_id": ("user_api_key_team_id",),
    "md_status": ("status",),
    "md_error_class": ("error_information", "error_class"),
    "md_error_code": ("error_information", "error_code"),
    "md_rate_limit_type": ("error_information", "error_rate_limit_type"),  # LiteLLM >= 1.106
    "md_cached_uo": ("usage_object", "prompt_tokens_details", "cached_tokens"),
    "md_cached_auv": ("additional_usage_values", "prompt_tokens_details", "cached_tokens"),
    "md_cache_read_auv": ("additional_usage_values", "cache_read_input_tokens"),
    "md_cache_creation_uo": ("usage_object", "cache_creation_input_tokens"),
    "md_cache_creation_auv": ("additional_usage_values", "cache_creation_input_tokens"),
    "md_reasoning_uo": ("usage_object", "completion_tokens_details", "reasoning_tokens"),
    "md_reasoning_auv": ("additional_usage_values", "completion_tokens_details", "reasoning_tokens"),
    # the model group the client asked for, before any fallback (LiteLLM >= 1.100)
    "md_original_model_group": ("original_model_group",),
}
# metadata numbers the router and the proxy stamp, read as JSON text (`#>`, JSON null as
# NULL) rather than `#>>`: a JSON string keeps its quotes there, so the transform takes a
# number and only a number ("2" as text is not one). LiteLLM writes null, or leaves the key
# out in releases before these, when it does not know.
METADATA_NUMBERS: dict[str, tuple[str, ...]] = {
    "md_attempted_fallbacks": ("attempted_fallbacks",),  # LiteLLM >= 1.100
    "md_attempted_retries": ("attempted_retries",),  # LiteLLM >= 1.81.16 (not in 1.81.0)
    "md_overhead_ms": ("litellm_overhead_time_ms",),  # LiteLLM >= 1.81
}
METADATA_TAGS_PATH = ("tags",)
# Words picked out of a metadata text by a pattern (its one group), never the text itself:
# the error message is free text (a provider's may echo a prompt), but LiteLLM's rate
# limiter writes a fixed sentence, "Rate limit exceeded for api_key: <key>. Limit type:
# tokens. ..." (parallel_request_limiter_v3); the transform keeps a word only from a
# limiter's refusal and only when it is one LiteLLM uses there. The patterns mean the same
# to PostgreSQL (`substring(... from ...)`) and to Python (`re.search`).
_ERROR_MESSAGE = ("error_information", "error_message")
METADATA_WORDS: dict[str, tuple[tuple[str, ...], str]] = {
    "md_rate_limit_scope": (_ERROR_MESSAGE, r"Rate limit exceeded for ([a-z_]{1,40}): "),
    "md_rate_limit_kind": (_ERROR_MESSAGE, r"Limit type: ([a-z_]{1,40})\."),
}

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
    + [(name, pa.string()) for name in METADATA_WORDS]
    + [(name, pa.string()) for name in METADATA_NUMBERS]
    + [
        # source columns whose value could not be read (an infinite timestamp, text where
        # a count belongs): read as NULL, and the row counted as malformed
        ("unreadable", pa.list_(pa.string())),
        # an earlier-written copy of this request_id lies on another UTC day
        ("earlier_copy", pa.bool_()),
    ]
)

# Column types the ETL reads besides LiteLLM's own (jsonb, timestamp(3)): a table made
# by hand or by another tool. Anything else is refused with a message, not a traceback.
_JSON_TYPES = frozenset({"jsonb", "json", "text", "varchar", "bpchar"})
_TAG_TYPES = _JSON_TYPES | {"_text", "_varchar"}
_TIME_TYPES = frozenset({"timestamp", "timestamptz"})
_INTEGER_TYPES = frozenset({"int2", "int4", "int8"})
_NUMBER_TYPES = _INTEGER_TYPES | {"float4", "float8", "numeric"}
# what PostgreSQL's int8 and float8 input functions accept, so the cast cannot fail
_INT_TEXT = r"^\s*[+-]?[0-9]{1,18}\s*$"
_FLOAT_TEXT = r"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?\s*$"
# psycopg, Python and Arrow's conversions stop at years 1 and 9999; PostgreSQL goes on
# (BC dates, year 294276, infinity)
_TIME_RANGE = sql.SQL("BETWEEN '0001-01-01'::timestamp AND '9999-12-31 23:59:59.999999'::timestamp")


@dataclass(frozen=True)
class SourceInfo:
    """What this LiteLLM database's spend-log table offers."""

    columns: frozenset[str]
    created_at_indexed: bool
    estimated_rows: int
    types: tuple[tuple[str, str], ...] = ()  # (column, PostgreSQL type name), when known
    request_id_unique: bool = True  # a unique index on request_id alone (LiteLLM's key)

    @property
    def has_created_at(self) -> bool:
        return "created_at" in self.columns

    def type_of(self, column: str) -> str:
        """The column's type name (int4, jsonb, _text, ...); LiteLLM's when not known."""
        return dict(self.types).get(column) or _LITELLM_TYPES.get(column, "text")


# LiteLLM's own column types (its counts are int4)
_LITELLM_TYPES = {"metadata": "jsonb", "request_tags": "jsonb"} | {
    column: "int4" if pg_type == "int8" else pg_type for _, column, _, pg_type in _PLAIN_COLUMNS
}


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
_LIBPQ_OPTIONS = frozenset(o.keyword.decode() for o in psycopg.pq.Conninfo.get_defaults())


def parse_source_url(url: str) -> URL:
    """Parse a SQLAlchemy / libpq / Prisma PostgreSQL URL; reject anything else clearly."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(
            "--source is not a database URL; expected postgresql://user:password@host:5432/litellm"
        ) from None
    except ValueError:  # SQLAlchemy's int() of whatever follows the host's last ":"
        raise ConfigError(_address_problem(url)) from None
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
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise ConfigError(f"--source has port {parsed.port}; a port is a number from 1 to 65535")
    _check_options(parsed)
    return parsed


def _address_problem(url: str) -> str:
    """Which part of host:port is wrong, without echoing the URL (it may hold a password)."""
    try:
        port = urlsplit(url).port
    except ValueError as exc:
        if "IPv6" in str(exc):
            return (
                "--source has a malformed IPv6 host: write it in brackets, "
                "e.g. postgresql://user:password@[::1]:5432/litellm"
            )
        if "range" in str(exc):
            return "--source has a port out of range; a port is a number from 1 to 65535"
        return "--source has a port that is not a number; e.g. postgresql://user:password@host:5432/litellm"
    return (
        f"--source has a malformed host or port ({port}); e.g. postgresql://user:password@host:5432/litellm"
    )


def _check_options(url: URL) -> None:
    """libpq rejects an option it does not know when connecting, in a message that a
    cron log would show without saying it came from the URL."""
    unknown = sorted(set(url.query) - _LIBPQ_OPTIONS - _PRISMA_ONLY - {"schema"})
    if unknown:
        raise ConfigError(
            f"--source has unknown option(s) {', '.join(unknown)} after '?': remove them or correct "
            "their spelling (PostgreSQL's own, e.g. sslmode, connect_timeout, options; and schema)"
        )


def describe_source(url: URL) -> str:
    """user@host:port/database: no password, no query options (which may carry one)."""
    user = f"{url.username}@" if url.username else ""
    port = f":{url.port}" if url.port else ""
    host = url.host or "localhost"
    host = f"[{host}]" if ":" in host else host  # IPv6, written as a URL writes it
    return f"postgresql://{user}{host}{port}/{url.database or ''}"


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
    try:
        conninfo = make_conninfo(base, **{**_SESSION, **query, "options": " ".join(options)})
    except psycopg.ProgrammingError as exc:
        # libpq's message may quote the option's value, which may be a password
        raise ConfigError(
            f"--source has an option libpq cannot use ({type(exc).__name__}): correct the options after '?'"
        ) from None
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
    types = _column_types(conn, SPEND_LOGS)
    columns = frozenset(types)
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
    _check_types(types, database)
    row = conn.execute(
        "SELECT c.reltuples, EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a "
        "ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
        "WHERE i.indrelid = c.oid AND a.attname = 'created_at'), "
        "EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a "
        "ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
        "WHERE i.indrelid = c.oid AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL "
        "AND a.attname = 'request_id') "
        "FROM pg_class c WHERE c.oid = to_regclass(%s)",
        [_regclass(SPEND_LOGS)],
    ).fetchone()
    reltuples, indexed, unique = row if row else (0, False, False)
    return SourceInfo(
        columns=columns,
        created_at_indexed=bool(indexed),
        estimated_rows=max(int(reltuples or 0), 0),
        types=tuple(sorted(types.items())),
        request_id_unique=bool(unique),
    )


def _check_types(types: Mapping[str, str], database: str) -> None:
    expected = {"metadata": _JSON_TYPES, "request_tags": _TAG_TYPES} | {
        column: _TIME_TYPES for _, column, _, pg_type in _PLAIN_COLUMNS if pg_type == "timestamp"
    }
    for column, allowed in expected.items():
        if column in types and types[column] not in allowed:
            raise SourceDataError(
                f'column "{column}" of {SPEND_LOGS} in database {database} has type {types[column]}, '
                f"which the ETL cannot read (LiteLLM creates it as {_LITELLM_TYPES[column]}): "
                f"point --source at LiteLLM's own database, or convert the column to {_LITELLM_TYPES[column]}"
            )


# --- reading --------------------------------------------------------------------------


def spend_logs_query(info: SourceInfo, window: Window | None) -> tuple[sql.Composed, dict[str, Any]]:
    """The extraction SELECT for this table's columns and the window to read."""
    items: list[sql.Composable] = []
    unreadable: list[sql.Composable] = []
    for raw, column, _, pg_type in _PLAIN_COLUMNS:
        if column in info.columns:
            expr, bad = _plain_column(column, pg_type, info.type_of(column))
            if bad is not None:
                unreadable.append(sql.SQL("CASE WHEN {} THEN {} END").format(bad, sql.Literal(column)))
        else:
            expr = sql.SQL("NULL::{}").format(sql.SQL(pg_type))
        items.append(sql.SQL("{} AS {}").format(expr, sql.Identifier(raw)))
    items += [
        *_request_tags(info.type_of("request_tags")),
        sql.SQL("jsonb_typeof(md.m) AS metadata_type"),
        sql.SQL(
            "CASE jsonb_typeof(md.m #> {p}) WHEN 'array' THEN "
            "ARRAY(SELECT jsonb_array_elements_text(md.m #> {p})) END AS md_tags"
        ).format(p=sql.Literal(list(METADATA_TAGS_PATH))),
    ]
    for name, path in METADATA_TEXT.items():
        items.append(sql.SQL("md.m #>> {} AS {}").format(sql.Literal(list(path)), sql.Identifier(name)))
    for name, (path, pattern) in METADATA_WORDS.items():
        items.append(
            sql.SQL("substring(md.m #>> {} from {}) AS {}").format(
                sql.Literal(list(path)), sql.Literal(pattern), sql.Identifier(name)
            )
        )
    for name, path in METADATA_NUMBERS.items():
        items.append(
            sql.SQL("NULLIF((md.m #> {})::text, 'null') AS {}").format(
                sql.Literal(list(path)), sql.Identifier(name)
            )
        )
    items.append(
        # NULL, not an empty array, for the usual row: psycopg converts it for free
        sql.SQL("NULLIF(array_remove(ARRAY[{}]::text[], NULL), '{{}}') AS unreadable").format(
            sql.SQL(", ").join(unreadable)
        )
    )
    items.append(sql.SQL("{} AS earlier_copy").format(_earlier_copy(info)))

    # metadata is ~10 KB of TOASTed JSON per row, and PostgreSQL de-toasts it again for
    # every path read from the column. `#> '{}'` returns the de-toasted value itself; the
    # lateral subquery (kept apart by OFFSET 0) hands that one copy to all the paths
    # above: 13 paths then cost about what one does (measured: 10x less than reading the
    # column directly). COALESCE covers old PostgreSQL releases where `#> '{}'` is NULL.
    # Metadata kept as json or text (not LiteLLM's jsonb) is parsed once here instead.
    metadata = (
        sql.SQL("COALESCE(s.metadata #> '{}', s.metadata)")
        if info.type_of("metadata") == "jsonb"
        else sql.SQL("s.metadata::jsonb")
    )
    query = sql.SQL(
        "SELECT {items} FROM {table} s CROSS JOIN LATERAL (SELECT {metadata} AS m OFFSET 0) md"
    ).format(items=sql.SQL(", ").join(items), table=sql.Identifier(SPEND_LOGS), metadata=metadata)
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


def _plain_column(
    column: str, pg_type: str, source_type: str
) -> tuple[sql.Composable, sql.Composable | None]:
    """The column read as `pg_type`, and the condition under which its value cannot be
    (None: always readable). An unreadable value is read as NULL, never an error: one odd
    row must not stop every run."""
    ref: sql.Composable = sql.SQL("s.{}").format(sql.Identifier(column))
    if pg_type == "timestamp":
        return _timestamp(ref, source_type)
    if pg_type == "text" or (pg_type == "int8" and source_type in _INTEGER_TYPES):
        return sql.SQL("{}::{}").format(ref, sql.SQL(pg_type)), None
    if pg_type == "float8" and source_type in _NUMBER_TYPES:
        return (ref if source_type == "float8" else sql.SQL("{}::float8").format(ref)), None
    # a number kept as text (or as a fraction where a count belongs)
    pattern = _INT_TEXT if pg_type == "int8" else _FLOAT_TEXT
    fits = sql.SQL("{}::text ~ {}").format(ref, sql.Literal(pattern))
    value = sql.SQL("CASE WHEN {} THEN {}::text::{} END").format(fits, ref, sql.SQL(pg_type))
    return value, sql.SQL("NOT ({})").format(fits)


def _timestamp(
    ref: sql.Composable, source_type: str, before: sql.Composable | None = None
) -> tuple[sql.Composable, sql.Composable]:
    """A timestamp column as naive UTC, NULL where Python cannot hold it (infinity, BC,
    after 9999), and the condition under which it is so. `before`: the value to read
    instead for a time before year 1 (an expiry of -infinity has passed)."""
    value = _naive_utc(ref, source_type)
    inside = sql.SQL("{} {}").format(value, _TIME_RANGE)
    earlier: sql.Composable = sql.SQL("")
    if before is not None:
        earlier = sql.SQL(" WHEN {} < '0001-01-01'::timestamp THEN {}").format(value, before)
    read = sql.SQL("CASE WHEN {} THEN {}{} END").format(inside, value, earlier)
    return read, sql.SQL("NOT ({})").format(inside)


def _naive_utc(ref: sql.Composable, source_type: str) -> sql.Composable:
    """LiteLLM stores naive UTC; a timestamptz column is brought to the same."""
    return ref if source_type == "timestamp" else sql.SQL("({} AT TIME ZONE 'UTC')").format(ref)


def _request_tags(source_type: str) -> list[sql.Composable]:
    """request_tags as a text array, and its JSON type (`array` for a SQL array)."""
    if source_type.startswith("_"):
        return [
            sql.SQL("s.request_tags::text[] AS request_tags"),
            sql.SQL("CASE WHEN s.request_tags IS NOT NULL THEN 'array' END AS request_tags_type"),
        ]
    tags = sql.SQL("s.request_tags" if source_type == "jsonb" else "s.request_tags::jsonb")
    return [
        sql.SQL(
            "CASE jsonb_typeof({t}) WHEN 'array' THEN ARRAY(SELECT jsonb_array_elements_text({t})) "
            "END AS request_tags"
        ).format(t=tags),
        sql.SQL("jsonb_typeof({}) AS request_tags_type").format(tags),
    ]


def _earlier_copy(info: SourceInfo) -> sql.Composable:
    """Whether a copy of the row's request_id written before it lies on another UTC day.

    Only a table without LiteLLM's unique request_id (a partitioned one keys on request_id
    and startTime) can hold one; the first copy written is the request, as for the
    overlap's duplicates, whichever run reads which copy.
    """
    if info.request_id_unique:
        return sql.SQL("false")
    start_type = info.type_of("startTime")
    order = "created_at" if info.has_created_at else "startTime"

    def ref(alias: str, column: str) -> sql.Composable:
        return sql.SQL("{}.{}").format(sql.Identifier(alias), sql.Identifier(column))

    def day(alias: str) -> sql.Composable:
        return sql.SQL("{}::date").format(_naive_utc(ref(alias, "startTime"), start_type))

    return sql.SQL(
        "EXISTS (SELECT 1 FROM {table} o WHERE o.request_id = s.request_id AND {o_day} <> {s_day} "
        "AND ({o_order}, {o_start}) < ({s_order}, {s_start}))"
    ).format(
        table=sql.Identifier(SPEND_LOGS),
        o_day=day("o"),
        s_day=day("s"),
        o_order=ref("o", order),
        o_start=ref("o", "startTime"),
        s_order=ref("s", order),
        s_start=ref("s", "startTime"),
    )


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


KEYS_TABLE = "LiteLLM_VerificationToken"
USERS_TABLE = "LiteLLM_UserTable"
# What a key's expiry before year 1 (-infinity, a BC date) is read as: a time long past,
# since such a key has expired (fail closed); one that pandas and every time zone can hold
EXPIRED_LONG_AGO = dt.datetime(1970, 1, 1)


@dataclass(frozen=True)
class Snapshot:
    """A copy of LiteLLM's key or user table, and how many of its values could not be read
    (a time out of Python's range), per "table.column": read as NULL, never an error."""

    table: pa.Table
    unreadable: dict[str, int]


def read_keys(conn: psycopg.Connection[Any], snapshot_at: dt.datetime) -> Snapshot:
    """`LiteLLM_VerificationToken` as `KEYS_SCHEMA`: hashes only, LiteLLM never has the key."""
    types = _column_types(conn, KEYS_TABLE)
    budget = _columns(conn, "LiteLLM_BudgetTable") if "budget_id" in types else frozenset()
    items: list[sql.Composable] = []
    unreadable: list[sql.Composable] = []
    for name, column, pg_type in _KEY_COLUMNS:
        expr: sql.Composable = (
            sql.SQL("k.{}").format(sql.Identifier(column)) if column in types else sql.SQL("NULL")
        )
        if name in _KEY_BUDGET_FALLBACK and column in budget:
            expr = sql.SQL("COALESCE({}, b.{})").format(expr, sql.Identifier(column))
        items.append(
            _snapshot_item(expr, name, column, pg_type, source_type=types.get(column), unreadable=unreadable)
        )
    join = (
        sql.SQL(' LEFT JOIN "LiteLLM_BudgetTable" b ON b.budget_id = k.budget_id') if budget else sql.SQL("")
    )
    query = sql.SQL("SELECT {}, {} FROM {} k{} ORDER BY 1").format(
        sql.SQL(", ").join(items), _unreadable_list(unreadable), sql.Identifier(KEYS_TABLE), join
    )
    return _snapshot(conn, query, KEYS_TABLE, frozenset(types), schema=KEYS_SCHEMA, snapshot_at=snapshot_at)


def read_users(conn: psycopg.Connection[Any], snapshot_at: dt.datetime) -> Snapshot:
    """`LiteLLM_UserTable` as `USERS_SCHEMA`."""
    types = _column_types(conn, USERS_TABLE)
    unreadable: list[sql.Composable] = []
    items = [
        _snapshot_item(
            sql.SQL("u.{}").format(sql.Identifier(column)) if column in types else sql.SQL("NULL"),
            name,
            column,
            pg_type,
            source_type=types.get(column),
            unreadable=unreadable,
        )
        for name, column, pg_type in _USER_COLUMNS
    ]
    query = sql.SQL("SELECT {}, {} FROM {} u ORDER BY 1").format(
        sql.SQL(", ").join(items), _unreadable_list(unreadable), sql.Identifier(USERS_TABLE)
    )
    return _snapshot(conn, query, USERS_TABLE, frozenset(types), schema=USERS_SCHEMA, snapshot_at=snapshot_at)


def _snapshot_item(
    expr: sql.Composable,
    name: str,
    column: str,
    pg_type: str,
    *,
    source_type: str | None,
    unreadable: list[sql.Composable],
) -> sql.Composable:
    """One column of a key or user snapshot; a time read as the spend logs' are (NULL out
    of range), its condition for being unreadable added to `unreadable`."""
    if pg_type == "timestamp" and source_type in _TIME_TYPES:
        before = sql.Literal(EXPIRED_LONG_AGO) if column == "expires" else None
        expr, bad = _timestamp(expr, source_type, before)
        unreadable.append(sql.SQL("CASE WHEN {} THEN {} END").format(bad, sql.Literal(column)))
    return sql.SQL("{}::{} AS {}").format(expr, sql.SQL(pg_type), sql.Identifier(name))


def _unreadable_list(unreadable: list[sql.Composable]) -> sql.Composable:
    if not unreadable:
        return sql.SQL("NULL::text[]")
    return sql.SQL("array_remove(ARRAY[{}]::text[], NULL)").format(sql.SQL(", ").join(unreadable))


def _columns(conn: psycopg.Connection[Any], table: str) -> frozenset[str]:
    """The table's columns (in the connection's search_path); empty if there is no table."""
    return frozenset(_column_types(conn, table))


def _column_types(conn: psycopg.Connection[Any], table: str) -> dict[str, str]:
    """Each column's type name (a domain's base type): int4, jsonb, _text, timestamp, ..."""
    rows = conn.execute(
        "SELECT a.attname, t.typname FROM pg_attribute a JOIN pg_type d ON d.oid = a.atttypid "
        "JOIN pg_type t ON t.oid = CASE d.typtype WHEN 'd' THEN d.typbasetype ELSE d.oid END "
        "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped",
        [_regclass(table)],
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def _regclass(table: str) -> str:
    return '"' + table.replace('"', '""') + '"'


def _snapshot(
    conn: psycopg.Connection[Any],
    query: sql.Composed,
    table: str,
    columns: frozenset[str],
    *,
    schema: pa.Schema,
    snapshot_at: dt.datetime,
) -> Snapshot:
    if not columns:  # a release without this table: an empty snapshot, not an error
        return Snapshot(schema.empty_table(), {})
    rows = conn.execute(query).fetchall()
    unreadable: dict[str, int] = {}
    for row in rows:
        for column in row[-1] or ():
            unreadable[f"{table}.{column}"] = unreadable.get(f"{table}.{column}", 0) + 1
    data = list(zip(*rows, strict=True))[:-1] if rows else [()] * (len(schema) - 1)
    arrays = []
    for values, f in zip(data, schema, strict=False):
        naive = pa.timestamp("us") if pa.types.is_timestamp(f.type) else f.type
        arrays.append(pa.array(values, type=naive).cast(f.type))
    arrays.append(pa.repeat(pa.scalar(snapshot_at, schema.field("snapshot_at").type), len(rows)))
    return Snapshot(pa.table(arrays, schema=schema), unreadable)


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
