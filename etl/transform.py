"""Transform: raw spend-log rows in, typed store rows out. Pure: no I/O, no clock.

Applies the store contract (`docs/store.md`): which source field wins for each
column, the noise rules, and the node and client rules. A value that cannot be made sense
of (text where a count belongs, a count beyond its total, metadata that is not an object)
never stops the run and never drops the row: the column falls back to its default and
the row is counted as malformed. Only a row that cannot be placed is left out (and counted
as malformed): one without a usable startTime has no day, and a later copy of a request_id
stored on another day would count the request twice.

This module holds `transform` and its account of the rows repaired and left out. The
rules it applies are in transform_rules.py (re-exported from here), the Arrow operations
it is written in are in transform_columns.py.

One module because `transform` is one flat function on purpose (pyproject.toml says why):
its account of repaired and skipped rows sits beside the code it describes.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from contract.store import REQUESTS_SCHEMA, UTC_TS
from etl.extract import RAW_SCHEMA
from etl.transform_columns import (
    _any,
    _count,
    _drop_null_elements,
    _has_tag,
    _longest_user_agent_tag,
    _map_unique,
    _node_column,
    _nonempty,
)
from etl.transform_rules import (
    DEFAULT_CLIENT_RULES,
    HEALTH_CHECK,
    HEALTH_CHECK_SHA256,
    MASTER_KEY_LITERAL,
    MASTER_KEY_USER,
    NOISE_REASONS,
    RATE_LIMIT_CLASS,
    RATE_LIMIT_KINDS,
    RATE_LIMIT_SCOPES,
    UNKNOWN,
    USER_AGENT_TAG,
    Rules,
    _rate_limit_kind,
    host_port,
)

__all__ = [
    "DEFAULT_CLIENT_RULES",
    "HEALTH_CHECK",
    "HEALTH_CHECK_SHA256",
    "MASTER_KEY_LITERAL",
    "MASTER_KEY_USER",
    "MAX_ATTEMPTS",
    "MAX_OVERHEAD_MS",
    "NOISE_REASONS",
    "RATE_LIMIT_CLASS",
    "RATE_LIMIT_KINDS",
    "RATE_LIMIT_SCOPES",
    "UNKNOWN",
    "USER_AGENT_TAG",
    "Rules",
    "Transformed",
    "host_port",
    "transform",
]


_CODE_TEXT = r"^[A-Za-z0-9_.-]{1,40}$"  # an HTTP status or a provider's code word, not a message

# A JSON number as `#>>` prints it (whitespace is trimmed before matching).
_COUNT_TEXT = re.compile(r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$").pattern
# The router's counts of a request's fallbacks and retries: LiteLLM stops at max_fallbacks
# (5 by default) and num_retries (a few); beyond this a count is no count.
MAX_ATTEMPTS = 1000
# LiteLLM's own time on a request, in ms: beyond a day it is no measurement.
MAX_OVERHEAD_MS = 86_400_000.0


@dataclass
class Transformed:
    """One batch's store rows, and what was left out or repaired on the way."""

    table: pa.Table
    dropped: dict[str, int]
    dropped_rows: pa.Table  # request_id, date of the rows dropped as noise
    malformed: int  # the rows left out (`skipped`) among them
    malformed_examples: list[str]
    # kept although tagged like noise (a health check, a configured tag): a client set the
    # tag on a user key's request, which makes it usage all the same
    noise_tagged: int = 0
    skipped: int = 0  # malformed rows that could not be placed: not stored


def transform(
    raw: pa.Table, rules: Rules, ingested_at: dt.datetime, count: pa.Array | pa.ChunkedArray | None = None
) -> Transformed:
    """Apply the store contract to a `RAW_SCHEMA` table.

    `count` marks the rows whose noise and repairs are counted (default: all); the ETL
    leaves out rows an earlier run already counted.
    """
    if raw.schema != RAW_SCHEMA:
        raise TypeError("transform() takes a table in extract.RAW_SCHEMA")
    skipped = _Skipped(raw, count)
    raw, count = skipped.rest, skipped.rest_count
    n = raw.num_rows
    col = raw.column
    bad = _Malformed(n, col("request_id"))

    api_key = _nonempty(col("api_key"))
    key_alias = _nonempty(col("md_key_alias"))
    user_id = pc.coalesce(_nonempty(col("md_user_id")), _nonempty(col("user")))
    team_raw = _nonempty(col("team_id"))
    md_team = _nonempty(col("md_team_id"))
    team_id = pc.coalesce(team_raw, md_team)
    end_user = _nonempty(col("end_user"))
    key_label = pc.if_else(
        pc.is_null(api_key),
        pa.scalar(UNKNOWN),
        pc.binary_join_element_wise("key:", pc.utf8_slice_codeunits(api_key, 0, 8), ""),
    )
    user = pc.coalesce(user_id, key_alias, end_user, key_label)

    bad.mark(
        pc.and_(pc.is_valid(col("metadata_type")), pc.not_equal(col("metadata_type"), "object")), "metadata"
    )
    bad.mark(pc.not_equal(col("request_tags_type"), "array"), "request_tags")
    request_tags = pc.if_else(
        pc.is_null(col("request_tags")), pa.scalar([], pa.list_(pa.string())), col("request_tags")
    )
    request_tags = _drop_null_elements(request_tags)

    # noise: health checks, then the master key, then the configured rules. Decided only
    # from what the proxy sets (the key, its team, its owner), never from what a client
    # sends (tags, end_user): a student's request tagged as a health check is usage.
    noise = rules.noise
    health = _any(
        pc.is_in(api_key, pa.array([HEALTH_CHECK, HEALTH_CHECK_SHA256])),
        pc.equal(team_raw, HEALTH_CHECK),
    )
    master = _any(
        pc.equal(api_key, MASTER_KEY_LITERAL),
        pc.is_in(api_key, pa.array(sorted(noise.master_key_hashes), pa.string())),
        pc.equal(user_id, MASTER_KEY_USER),
    )
    tag_keys = pa.array(sorted(noise.tag_keys), pa.string())
    by_rule = _any(
        pc.is_in(key_alias, pa.array(sorted(noise.key_aliases), pa.string())),
        pc.is_in(user_id, pa.array(sorted(noise.users), pa.string())),
        pc.and_(
            pc.fill_null(_any(pc.is_in(key_alias, tag_keys), pc.is_in(api_key, tag_keys)), False),
            _has_tag(request_tags, noise.tags),
        ),
    )
    is_health = health
    is_master = pc.and_not(master, is_health)
    is_rule = pc.and_not(by_rule, pc.or_(is_health, is_master))
    counted = pa.repeat(pa.scalar(True), n) if count is None else pc.fill_null(count, True)
    dropped = {
        "health_check": _count(pc.and_(is_health, counted)),
        "master_key": _count(pc.and_(is_master, counted)),
        "rule": _count(pc.and_(is_rule, counted)),
    }
    keep = pc.invert(_any(is_health, is_master, is_rule))
    noise_tags = {HEALTH_CHECK, *noise.tags}
    tagged = _any(_has_tag(request_tags, noise_tags), _has_tag(col("md_tags"), noise_tags))

    # tokens
    prompt = bad.at_least_zero(col("prompt_tokens"), "prompt_tokens")
    completion = bad.at_least_zero(col("completion_tokens"), "completion_tokens")
    total = bad.at_least_zero(col("total_tokens"), "total_tokens")
    cached_uo = bad.count(col("md_cached_uo"), "cached_tokens")
    cached_auv = bad.count(col("md_cached_auv"), "cached_tokens")
    cache_read = bad.count(col("md_cache_read_auv"), "cache_read_input_tokens")
    cache_read = pc.if_else(pc.greater(cache_read, 0), cache_read, pa.scalar(None, pa.int64()))
    cached = pc.coalesce(cached_uo, cached_auv, cache_read, pa.scalar(0, pa.int64()))
    cache_creation = pc.coalesce(
        bad.count(col("md_cache_creation_uo"), "cache_creation_input_tokens"),
        bad.count(col("md_cache_creation_auv"), "cache_creation_input_tokens"),
        pa.scalar(0, pa.int64()),
    )
    reasoning = pc.coalesce(
        bad.count(col("md_reasoning_uo"), "reasoning_tokens"),
        bad.count(col("md_reasoning_auv"), "reasoning_tokens"),
        pa.scalar(0, pa.int64()),
    )
    # cached tokens are part of the prompt, reasoning tokens part of the completion
    bad.mark(pc.greater(cached, prompt), "cached_tokens")
    cached = pc.min_element_wise(cached, prompt)
    bad.mark(pc.greater(reasoning, completion), "reasoning_tokens")
    reasoning = pc.min_element_wise(reasoning, completion)

    # status
    status_raw = pc.coalesce(_nonempty(col("status")), _nonempty(col("md_status")))
    status_raw = pc.utf8_lower(status_raw)
    error_class = _nonempty(col("md_error_class"))
    known = pc.is_in(status_raw, pa.array(["success", "failure"]))
    bad.mark(pc.and_(pc.is_valid(status_raw), pc.invert(known)), "status")
    failed = pc.if_else(
        known, pc.equal(status_raw, "failure"), pc.and_(pc.is_valid(status_raw), pc.is_valid(error_class))
    )
    status = pc.if_else(pc.fill_null(failed, False), pa.scalar("failure"), pa.scalar("success"))
    error_code = pc.utf8_trim_whitespace(col("md_error_code"))
    code_like = pc.fill_null(pc.match_substring_regex(error_code, _CODE_TEXT), False)
    error_code = pc.if_else(code_like, error_code, pa.scalar(None, pa.string()))
    refused = pc.and_(
        pc.fill_null(failed, False),
        _any(
            pc.equal(error_class, RATE_LIMIT_CLASS),
            pc.and_(pc.equal(error_class, "HTTPException"), pc.equal(error_code, "429")),
        ),
    )
    kind_named = pc.coalesce(_nonempty(col("md_rate_limit_type")), col("md_rate_limit_kind"))
    kind = _nonempty(_map_unique(kind_named, _rate_limit_kind))
    rate_limit = pc.if_else(refused, kind, pa.scalar(None, pa.string()))
    scope = col("md_rate_limit_scope")
    rate_limit_scope = pc.if_else(
        pc.and_(pc.is_valid(rate_limit), pc.is_in(scope, pa.array(sorted(RATE_LIMIT_SCOPES)))),
        scope,
        pa.scalar(None, pa.string()),
    )

    # routing, as LiteLLM's router stamps it: NULL where the row does not say (older
    # releases, failures before routing, health checks), never 0
    attempted_fallbacks = bad.number(col("md_attempted_fallbacks"), "attempted_fallbacks", MAX_ATTEMPTS)
    attempted_retries = bad.number(col("md_attempted_retries"), "attempted_retries", MAX_ATTEMPTS)
    overhead = bad.number(col("md_overhead_ms"), "litellm_overhead_time_ms", MAX_OVERHEAD_MS, whole=False)

    # times (LiteLLM stores naive UTC); a value the extract could not read (an infinite
    # endTime, a count stored as text that is no number) arrives as NULL, named in `unreadable`
    bad.mark_unreadable(col("unreadable"))
    start = col("start_time").cast(UTC_TS)
    first_token = col("completion_start_time").cast(UTC_TS)
    elapsed = pc.milliseconds_between(col("start_time"), col("end_time"))
    duration = pc.coalesce(col("request_duration_ms"), elapsed)
    bad.mark(pc.less(duration, 0), "duration")
    duration = pc.fill_null(pc.max_element_wise(duration, 0), 0)
    # readers take end_time as given: an unreadable one is where the duration says it was
    end = pc.coalesce(
        col("end_time").cast(UTC_TS), pc.add(start, pc.cast(pc.multiply(duration, 1000), pa.duration("us")))
    )

    # spend: one NaN would turn every sum over it into NaN, a negative one hides real spend
    spend = col("spend")
    spend_usable = pc.and_(pc.is_finite(spend), pc.greater_equal(spend, 0))
    bad.mark(pc.invert(spend_usable), "spend")
    spend = pc.fill_null(pc.if_else(spend_usable, spend, 0.0), 0.0)

    # where and how
    api_base = _nonempty(pc.utf8_rtrim(col("api_base"), characters="/"))
    unparseable = _map_unique(api_base, lambda v: "bad" if v and host_port(v) is None else "")
    bad.mark(pc.equal(unparseable, "bad"), "api_base")
    model = pc.fill_null(col("model"), "")
    model_group = pc.coalesce(_nonempty(col("model_group")), model)
    model_id = _nonempty(col("model_id"))
    user_agent = pc.coalesce(_nonempty(col("md_user_agent")), _longest_user_agent_tag(request_tags))
    client = _map_unique(user_agent, rules.client_for)
    node = _node_column(api_base, model_id, rules)

    table = pa.table(
        {
            "request_id": col("request_id"),
            "start_time": start,
            "end_time": end,
            "completion_start_time": first_token,
            "date": col("start_time").cast(pa.date32()),
            "api_key_hash": pc.fill_null(col("api_key"), ""),
            "key_alias": key_alias,
            "user_id": user_id,
            "team_id": team_id,
            "end_user": end_user,
            "user": user,
            "model": model,
            "model_group": model_group,
            "model_id": model_id,
            "provider": _nonempty(col("custom_llm_provider")),
            "api_base": api_base,
            "node": node,
            "user_agent": user_agent,
            "client": client,
            "call_type": pc.fill_null(col("call_type"), ""),
            "status": status,
            "error_class": error_class,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": total,
            "cached_tokens": cached,
            "cache_creation_tokens": cache_creation,
            "reasoning_tokens": reasoning,
            "spend": spend,
            "cache_hit": pc.fill_null(pc.equal(pc.utf8_lower(col("cache_hit")), "true"), False),
            "session_id": _nonempty(col("session_id")),
            "request_tags": request_tags,
            "duration_ms": duration,
            "ingested_at": pa.repeat(pa.scalar(ingested_at, UTC_TS), n),
            "error_code": error_code,
            "rate_limit": rate_limit,
            "rate_limit_scope": rate_limit_scope,
            "attempted_fallbacks": attempted_fallbacks,
            "attempted_retries": attempted_retries,
            "original_model_group": _nonempty(col("md_original_model_group")),
            "litellm_overhead_ms": overhead,
        },
        schema=REQUESTS_SCHEMA,
    )
    kept = table.filter(keep)
    bad_kept = pc.and_(pc.and_(bad.rows, keep), counted)
    return Transformed(
        table=kept,
        dropped=dropped,
        dropped_rows=pa.concat_tables(
            [table.select(["request_id", "date"]).filter(pc.invert(keep)), skipped.placed()]
        ),
        malformed=_count(bad_kept) + skipped.counted,
        malformed_examples=(skipped.examples() + bad.examples(bad_kept))[:5],
        skipped=skipped.counted,
        noise_tagged=_count(pc.and_(pc.and_(tagged, keep), counted)),
    )


class _Skipped:
    """The rows that cannot be stored (see the module's docstring), split off before
    anything else looks at them."""

    def __init__(self, raw: pa.Table, count: pa.Array | pa.ChunkedArray | None) -> None:
        no_start = pc.is_null(raw["start_time"])
        mask = _any(no_start, raw["earlier_copy"])
        counted = pa.repeat(pa.scalar(True), raw.num_rows) if count is None else pc.fill_null(count, True)
        self._rows = raw.filter(mask).select(["request_id", "start_time"])
        self._no_start = no_start.filter(mask)
        self._counted = pc.filter(counted, mask)
        self.counted = _count(self._counted)
        self.rest = raw.filter(pc.invert(mask))
        self.rest_count = None if count is None else pc.filter(count, pc.invert(mask))

    def placed(self) -> pa.Table:
        """request_id and date of the later copies (a full refresh removes stored ones)."""
        rows = self._rows.filter(pc.invert(self._no_start))
        return pa.table(
            {"request_id": rows["request_id"], "date": rows["start_time"].cast(pa.date32())},
            schema=pa.schema([("request_id", pa.string()), ("date", pa.date32())]),
        )

    def examples(self, limit: int = 5) -> list[str]:
        out = []
        for i in pc.indices_nonzero(self._counted).to_pylist()[:limit]:
            why = "no usable startTime" if self._no_start[i].as_py() else "request_id stored on another day"
            out.append(f"{self._rows['request_id'][i].as_py()} ({why}: skipped)")
        return out


class _Malformed:
    """Which rows carry a value that had to be repaired, and why (for the report)."""

    def __init__(self, n: int, request_ids: pa.ChunkedArray) -> None:
        self.rows = pa.array([False] * n, pa.bool_())
        self._request_ids = request_ids
        self._reasons: list[tuple[str, pa.Array]] = []

    def mark(self, mask: pa.Array | pa.ChunkedArray, reason: str) -> None:
        mask = pc.fill_null(mask, False)
        if pc.any(mask).as_py():
            self.rows = pc.or_(self.rows, mask)
            self._reasons.append((reason, mask))

    def mark_unreadable(self, unreadable: pa.ChunkedArray) -> None:
        """Mark the rows whose source columns the extract could not read, by column."""
        for column in pc.unique(pc.list_flatten(unreadable)).to_pylist():
            self.mark(_has_tag(unreadable, [column]), column)

    def at_least_zero(self, counts: pa.ChunkedArray, reason: str) -> pa.Array | pa.ChunkedArray:
        """A count, 0 when missing; a negative one is marked and counts as 0."""
        self.mark(pc.less(counts, 0), reason)
        return pc.fill_null(pc.max_element_wise(counts, 0), 0)

    def count(self, text: pa.ChunkedArray, reason: str) -> pa.Array:
        """A non-negative whole number from JSON text; anything else is NULL and marked."""
        text = pc.utf8_trim_whitespace(text)
        looks_numeric = pc.match_substring_regex(text, _COUNT_TEXT)
        as_float = pc.cast(pc.if_else(looks_numeric, text, pa.scalar(None, pa.string())), pa.float64())
        whole = pc.and_(pc.greater_equal(as_float, 0), pc.equal(pc.floor(as_float), as_float))
        whole = pc.and_(whole, pc.less(as_float, 2.0**62))
        self.mark(pc.and_(pc.is_valid(text), pc.invert(pc.fill_null(whole, False))), reason)
        return pc.cast(pc.if_else(whole, as_float, pa.scalar(None, pa.float64())), pa.int64())

    def number(self, json_text: pa.ChunkedArray, reason: str, most: float, *, whole: bool = True) -> pa.Array:
        """A JSON number in [0, most] (a whole one unless `whole` is False) from JSON text,
        as int64 (float64 when not `whole`); NULL when absent. Anything else (a string,
        which keeps its quotes, a negative or huge number, a fraction) is NULL and marked."""
        text = pc.utf8_trim_whitespace(json_text)
        looks_numeric = pc.match_substring_regex(text, _COUNT_TEXT)
        as_float = pc.cast(pc.if_else(looks_numeric, text, pa.scalar(None, pa.string())), pa.float64())
        sane = pc.and_(pc.greater_equal(as_float, 0), pc.less_equal(as_float, most))
        if whole:
            sane = pc.and_(sane, pc.equal(pc.floor(as_float), as_float))
        self.mark(pc.and_(pc.is_valid(text), pc.invert(pc.fill_null(sane, False))), reason)
        value = pc.if_else(sane, as_float, pa.scalar(None, pa.float64()))
        return pc.cast(value, pa.int64()) if whole else value

    def examples(self, rows: pa.Array, limit: int = 5) -> list[str]:
        out: list[str] = []
        for i in pc.indices_nonzero(rows).to_pylist()[:limit]:
            reasons = sorted({r for r, m in self._reasons if m[i].as_py()})
            out.append(f"{self._request_ids[i].as_py()} ({', '.join(reasons)})")
        return out
