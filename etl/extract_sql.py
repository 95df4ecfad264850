"""The extract's SQL: what is read from `LiteLLM_SpendLogs` and the SELECT that reads it.

The plain columns and the JSON paths picked out of `metadata` (`METADATA_TEXT`,
`METADATA_WORDS`, `METADATA_NUMBERS`), the `RAW_SCHEMA` they make, the column types the
ETL accepts, what a table offers (`SourceInfo`), which rows to read (`Window`), and
`spend_logs_query`, which composes the SELECT from them. Builds SQL only: nothing here
connects.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from psycopg import sql

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


# --- the SELECT ------------------------------------------------------------------------


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
