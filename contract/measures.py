"""Every measure the dashboard shows, declared once: name, label, unit, SQL.

Each becomes a DuckDB macro `metric.<name>(r)`, so a query writes
`metric.spend_usd(r) AS spend_usd` and a card, a chart and a test all mean the same
thing by `spend_usd`.

Most measures are sums, and are written over PARTS: per-request values that add up
(`n` = 1 per request, `spend_sum` = its spend, ...). The ETL stores those parts summed per
day and group (the rollups, contract/rollups.py); the readers give every raw request the same
columns, so one definition serves a day's rollup rows and single requests alike, and the
two can be mixed in one query. Percentiles cannot be summed: they are written over raw
requests only (`per_request=True`) and read from the day files of the window.
Sums are written `coalesce(sum(...), 0)` so that a time bucket with no requests (a LEFT
JOIN's empty row) counts 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Unit = Literal["count", "usd", "tokens", "ratio", "ms", "tokens_per_s"]

# Output speed is measured only on streamed answers long enough to time: at least
# SPEED_MIN_TOKENS completion tokens over at least SPEED_MIN_MS after the first token
# (a 3-token answer in 4 ms is not "750 tokens/s"). The others count as too_short.
# Microseconds throughout: DuckDB's epoch_ms rounds, which moved requests into the next
# 15-minute slot and made sub-millisecond generation times a division by zero.
SPEED_MIN_TOKENS = 16
SPEED_MIN_MS = 200
_GENERATION_US = "(epoch_us(end_time) - epoch_us(completion_start_time))"
_STREAMED = "coalesce(completion_start_time < end_time, false)"
_MEASURABLE = (
    f"completion_start_time < end_time AND completion_tokens >= {SPEED_MIN_TOKENS} "
    f"AND {_GENERATION_US} >= {SPEED_MIN_MS * 1000}"
)
# Per-request values the store contract derives at query time (docs/store.md), over a
# day file's columns.
DERIVED = {
    "streamed": _STREAMED,
    "ttft_ms": "CASE WHEN completion_start_time < end_time "
    "THEN (epoch_us(completion_start_time) - epoch_us(start_time)) / 1000.0 END",
    "output_tps": f"CASE WHEN {_MEASURABLE} THEN completion_tokens * 1e6 / {_GENERATION_US} END",
    "too_short": f"{_STREAMED} AND NOT coalesce({_MEASURABLE}, false)",
    "q15": "epoch_us(start_time) // 900000000",
}


@dataclass(frozen=True)
class Part:
    """A per-request value and how values combine (`sum`, `min`, `max`)."""

    name: str
    sql: str  # over a day file's columns (and DERIVED)
    combine: Literal["sum", "min", "max"]
    type: str  # its DuckDB type, the same in a rollup and on a single request


PARTS: tuple[Part, ...] = (
    Part("n", "1", "sum", "BIGINT"),
    Part("n_streamed", "streamed::BIGINT", "sum", "BIGINT"),
    Part("n_too_short", "too_short::BIGINT", "sum", "BIGINT"),
    Part("spend_sum", "spend", "sum", "DOUBLE"),
    Part("prompt_sum", "prompt_tokens", "sum", "BIGINT"),
    Part("cached_sum", "cached_tokens", "sum", "BIGINT"),
    Part("completion_sum", "completion_tokens", "sum", "BIGINT"),
    Part("reasoning_sum", "reasoning_tokens", "sum", "BIGINT"),
    Part("duration_sum", "duration_ms", "sum", "BIGINT"),
    Part("first_start", "start_time", "min", "TIMESTAMPTZ"),
    Part("last_start", "start_time", "max", "TIMESTAMPTZ"),
    Part("last_ingested", "ingested_at", "max", "TIMESTAMPTZ"),
)
# What a rollup row is grouped by: every dimension a filter, a grouping or a student's
# scope uses (user_id and key_alias follow from the key; they add no rows).
GROUPS = ("api_key_hash", "user", "user_id", "key_alias", "model_group", "node", "client", "status")


@dataclass(frozen=True)
class Metric:
    name: str
    label: str
    unit: Unit
    sql: str  # an aggregate over rows `r`
    description: str
    per_request: bool = False  # True: needs single requests (a percentile), not rollups
    # a percentile: the per-request value it is taken of, and which one (0.5: the median)
    of: str | None = None
    q: float | None = None


def _sum(part: str) -> str:
    # SUM of BIGINT is HUGEINT in DuckDB (a float in pandas): keep whole numbers whole
    return f"coalesce(sum(r.{part}), 0)::BIGINT"


def _percentile(name: str, label: str, unit: Unit, *, of: str, q: float, description: str) -> Metric:
    """The q-quantile of a per-request value (a single request's column, or DERIVED)."""
    return Metric(name, label, unit, f"quantile_cont(r.{of}, {q})", description, True, of, q)


def _count(condition: str | None = None) -> str:
    where = f" FILTER (WHERE {condition})" if condition else ""
    return f"coalesce(sum(r.n){where}, 0)::BIGINT"


METRICS: tuple[Metric, ...] = (
    Metric("requests", "Requests", "count", _count(), "Requests in the range, failed ones included."),
    Metric(
        "failures",
        "Failures",
        "count",
        _count("r.status = 'failure'"),
        "Requests LiteLLM logged as failed.",
    ),
    Metric(
        "successes",
        "Successful requests",
        "count",
        _count("r.status = 'success'"),
        "Requests LiteLLM logged as successful.",
    ),
    Metric(
        "failure_rate",
        "Failure rate",
        "ratio",
        _count("r.status = 'failure'") + " / NULLIF(sum(r.n), 0)",
        "Failed requests over all requests.",
    ),
    Metric(
        "success_rate",
        "Success rate",
        "ratio",
        _count("r.status = 'success'") + " / NULLIF(sum(r.n), 0)",
        "Successful requests over all requests.",
    ),
    Metric(
        "spend_usd", "Spend", "usd", "coalesce(sum(r.spend_sum), 0)", "Cost as LiteLLM priced it, in USD."
    ),
    Metric(
        "active_users",
        "Active users",
        "count",
        'count(DISTINCT r."user")',
        "People (or keys without an owner) with at least one request.",
    ),
    Metric("prompt_tokens", "Prompt tokens", "tokens", _sum("prompt_sum"), "Input tokens, cached included."),
    Metric(
        "cached_tokens",
        "Cached prompt tokens",
        "tokens",
        _sum("cached_sum"),
        "Prompt tokens served from the server's prefix cache.",
    ),
    Metric(
        "uncached_prompt_tokens",
        "Uncached prompt tokens",
        "tokens",
        _sum("prompt_sum - r.cached_sum"),
        "Prompt tokens the server had to compute.",
    ),
    Metric(
        "completion_tokens",
        "Completion tokens",
        "tokens",
        _sum("completion_sum"),
        "Output tokens, reasoning included.",
    ),
    Metric(
        "reasoning_tokens",
        "Reasoning tokens",
        "tokens",
        _sum("reasoning_sum"),
        "Output tokens spent thinking (where the server reports them).",
    ),
    Metric(
        "answer_tokens",
        "Answer tokens",
        "tokens",
        _sum("completion_sum - r.reasoning_sum"),
        "Output tokens of the answer itself: completion without reasoning.",
    ),
    Metric(
        "total_tokens",
        "Tokens",
        "tokens",
        # prompt + completion, not LiteLLM's total_tokens column: then the token kinds
        # always add up to the total, whatever a provider wrote in that column
        _sum("prompt_sum + r.completion_sum"),
        "Prompt and completion tokens.",
    ),
    Metric(
        "cache_hit_rate",
        "Cache hit rate",
        "ratio",
        "sum(r.cached_sum) / NULLIF(sum(r.prompt_sum), 0)",
        "Cached prompt tokens over all prompt tokens.",
    ),
    Metric(
        "latency_avg_ms",
        "Average latency",
        "ms",
        "sum(r.duration_sum) / NULLIF(sum(r.n), 0)",
        "Mean end-to-end request time.",
    ),
    _percentile(
        "latency_p50_ms",
        "Median latency",
        "ms",
        of="duration_ms",
        q=0.5,
        description="Median end-to-end request time.",
    ),
    _percentile(
        "latency_p95_ms",
        "95th percentile latency",
        "ms",
        of="duration_ms",
        q=0.95,
        description="End-to-end time that 95 % of requests stay under.",
    ),
    _percentile(
        "prompt_p50",
        "Median prompt",
        "tokens",
        of="prompt_tokens",
        q=0.5,
        description="Median prompt size in tokens.",
    ),
    _percentile(
        "prompt_p95",
        "95th percentile prompt",
        "tokens",
        of="prompt_tokens",
        q=0.95,
        description="Prompt size that 95 % of requests stay under.",
    ),
    Metric(
        "streamed_requests",
        "Streamed requests",
        "count",
        _sum("n_streamed"),
        "Requests answered as a stream (first token before the end).",
    ),
    _percentile(
        "ttft_p50_ms",
        "Median time to first token",
        "ms",
        of="ttft_ms",
        q=0.5,
        description="Median time from the request to its first token, streamed requests only.",
    ),
    _percentile(
        "ttft_p95_ms",
        "95th percentile time to first token",
        "ms",
        of="ttft_ms",
        q=0.95,
        description="Time to first token that 95 % of streamed requests stay under.",
    ),
    _percentile(
        "output_tps_p50",
        "Median output speed",
        "tokens_per_s",
        of="output_tps",
        q=0.5,
        description="Median completion tokens per second after the first token, streamed requests long "
        "enough to time.",
    ),
    Metric(
        "speed_too_short",
        "Too short to time",
        "count",
        _sum("n_too_short"),
        "Streamed requests left out of output speed: fewer than 16 completion tokens or under "
        "200 ms after the first token.",
    ),
    _percentile(
        "output_tps_p95",
        "95th percentile output speed",
        "tokens_per_s",
        of="output_tps",
        q=0.95,
        description="Output speed that only the fastest 5 % of streamed requests exceed.",
    ),
)

# LiteLLM's router, from the columns it writes on recent releases (docs/store.md); a NULL
# there is unknown (an older row, a request that never reached the router), never 0.
# Its counts are sums of these parts of a single request, which no rollup carries: the
# Nodes page's partials sum them per day (queries/serving.py).
ROUTING_PARTS: tuple[Part, ...] = (
    Part("n_routing_known", "(attempted_fallbacks IS NOT NULL)::BIGINT", "sum", "BIGINT"),
    Part("n_fallback", "coalesce(attempted_fallbacks > 0, false)::BIGINT", "sum", "BIGINT"),
    Part("n_retried", "coalesce(attempted_retries > 0, false)::BIGINT", "sum", "BIGINT"),
    Part("retries_sum", "coalesce(attempted_retries, 0)", "sum", "BIGINT"),
)
ROUTING: tuple[Metric, ...] = (
    Metric(
        "routing_known",
        "Requests with routing recorded",
        "count",
        _sum("n_routing_known"),
        "Requests whose row says how many fallbacks the router tried (LiteLLM 1.100 and later).",
        True,
    ),
    Metric(
        "fallback_requests",
        "Served by a fallback",
        "count",
        _sum("n_fallback"),
        "Requests the router sent to a fallback model group after the one asked for failed.",
        True,
    ),
    Metric(
        "retried_requests",
        "Retried requests",
        "count",
        _sum("n_retried"),
        "Requests the router retried within their model group.",
        True,
    ),
    Metric(
        "retries",
        "Retries",
        "count",
        _sum("retries_sum"),
        "Retries the router made within the model group, over all requests.",
        True,
    ),
    _percentile(
        "overhead_p50_ms",
        "Median LiteLLM overhead",
        "ms",
        of="litellm_overhead_ms",
        q=0.5,
        description="Median time a request spent in LiteLLM itself, not waiting for the node "
        "(non-streamed successes: LiteLLM times no others).",
    ),
    _percentile(
        "overhead_p95_ms",
        "95th percentile LiteLLM overhead",
        "ms",
        of="litellm_overhead_ms",
        q=0.95,
        description="LiteLLM overhead that 95 % of timed requests stay under.",
    ),
)
METRICS = (*METRICS, *ROUTING)

BY_NAME: dict[str, Metric] = {m.name: m for m in METRICS}


# Latency percentiles from rollups: each request's duration falls in a bin of a fixed
# logarithmic scale, and a bin stands for the value 2 g^b / (g + 1), within HIST_ACCURACY
# (relative) of every duration in it (DDSketch's mapping). Rollups count requests per
# bin; a percentile is then found among bins as among requests, interpolated the same
# way as quantile_cont, so it is within HIST_ACCURACY of the exact one.
HIST_ACCURACY = 0.01
HIST_GAMMA = (1 + HIST_ACCURACY) / (1 - HIST_ACCURACY)
_HIST_SHIFT = 100_000  # keeps bins of positive values positive, of negative ones negative
HIST_MACROS = (
    "CREATE OR REPLACE MACRO hist_bin(x) AS CASE "
    f"WHEN x > 0 THEN ceil(ln(x) / ln({HIST_GAMMA!r}))::INTEGER + {_HIST_SHIFT} "
    f"WHEN x < 0 THEN -(ceil(ln(-x) / ln({HIST_GAMMA!r}))::INTEGER + {_HIST_SHIFT}) "
    "WHEN x = 0 THEN 0 END",
    "CREATE OR REPLACE MACRO hist_value(b) AS CASE "
    f"WHEN b > 0 THEN 2 * pow({HIST_GAMMA!r}, b - {_HIST_SHIFT}) / {HIST_GAMMA + 1!r} "
    f"WHEN b < 0 THEN -2 * pow({HIST_GAMMA!r}, -b - {_HIST_SHIFT}) / {HIST_GAMMA + 1!r} "
    "WHEN b = 0 THEN 0.0 END",
)


# One more macro, not a measure: a group's part of the whole, e.g.
# metric.share(metric.requests(r)) AS requests_share
SHARE = "CREATE OR REPLACE MACRO metric.share(value) AS value / NULLIF(sum(value) OVER (), 0)"


def macro_statements() -> list[str]:
    """DDL that makes every metric a macro `metric.<name>(r)` in a DuckDB database."""
    return [
        "CREATE SCHEMA IF NOT EXISTS metric",
        *(f"CREATE OR REPLACE MACRO metric.{m.name}(r) AS {m.sql}" for m in METRICS),
        SHARE,
        *HIST_MACROS,
    ]
