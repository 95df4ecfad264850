"""Every measure the dashboard shows, declared once: name, label, unit, SQL.

Each becomes a DuckDB macro `metric.<name>(r)` over a row `r` of the `scoped` view, so
a query writes `metric.spend_usd(r) AS spend_usd` and a card, a chart and a test all
mean the same thing by `spend_usd`. Counts use `count(r.start_time)`, not `count(*)`,
so that a time bucket with no requests (a LEFT JOIN's empty row) counts 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Unit = Literal["count", "usd", "tokens", "ratio", "ms", "tokens_per_s"]


@dataclass(frozen=True)
class Metric:
    name: str
    label: str
    unit: Unit
    sql: str  # an aggregate over rows `r`
    description: str


def _sum(column: str) -> str:
    # SUM of BIGINT is HUGEINT in DuckDB (a float in pandas): keep whole numbers whole
    return f"coalesce(sum({column}), 0)::BIGINT"


METRICS: tuple[Metric, ...] = (
    Metric(
        "requests", "Requests", "count", "count(r.start_time)", "Requests in the range, failed ones included."
    ),
    Metric(
        "failures",
        "Failures",
        "count",
        "count(r.start_time) FILTER (WHERE r.status = 'failure')",
        "Requests LiteLLM logged as failed.",
    ),
    Metric(
        "successes",
        "Successful requests",
        "count",
        "count(r.start_time) FILTER (WHERE r.status = 'success')",
        "Requests LiteLLM logged as successful.",
    ),
    Metric(
        "failure_rate",
        "Failure rate",
        "ratio",
        "count(r.start_time) FILTER (WHERE r.status = 'failure') / NULLIF(count(r.start_time), 0)",
        "Failed requests over all requests.",
    ),
    Metric(
        "success_rate",
        "Success rate",
        "ratio",
        "count(r.start_time) FILTER (WHERE r.status = 'success') / NULLIF(count(r.start_time), 0)",
        "Successful requests over all requests.",
    ),
    Metric("spend_usd", "Spend", "usd", "coalesce(sum(r.spend), 0)", "Cost as LiteLLM priced it, in USD."),
    Metric(
        "active_users",
        "Active users",
        "count",
        'count(DISTINCT r."user")',
        "People (or keys without an owner) with at least one request.",
    ),
    Metric(
        "prompt_tokens", "Prompt tokens", "tokens", _sum("r.prompt_tokens"), "Input tokens, cached included."
    ),
    Metric(
        "cached_tokens",
        "Cached prompt tokens",
        "tokens",
        _sum("r.cached_tokens"),
        "Prompt tokens served from the server's prefix cache.",
    ),
    Metric(
        "uncached_prompt_tokens",
        "Uncached prompt tokens",
        "tokens",
        _sum("r.prompt_tokens - r.cached_tokens"),
        "Prompt tokens the server had to compute.",
    ),
    Metric(
        "completion_tokens",
        "Completion tokens",
        "tokens",
        _sum("r.completion_tokens"),
        "Output tokens, reasoning included.",
    ),
    Metric(
        "reasoning_tokens",
        "Reasoning tokens",
        "tokens",
        _sum("r.reasoning_tokens"),
        "Output tokens spent thinking (where the server reports them).",
    ),
    Metric(
        "answer_tokens",
        "Answer tokens",
        "tokens",
        _sum("r.completion_tokens - r.reasoning_tokens"),
        "Output tokens of the answer itself: completion without reasoning.",
    ),
    Metric(
        "total_tokens",
        "Tokens",
        "tokens",
        # prompt + completion, not LiteLLM's total_tokens column: then the token kinds
        # always add up to the total, whatever a provider wrote in that column
        _sum("r.prompt_tokens + r.completion_tokens"),
        "Prompt and completion tokens.",
    ),
    Metric(
        "cache_hit_rate",
        "Cache hit rate",
        "ratio",
        "sum(r.cached_tokens) / NULLIF(sum(r.prompt_tokens), 0)",
        "Cached prompt tokens over all prompt tokens.",
    ),
    Metric("latency_avg_ms", "Average latency", "ms", "avg(r.duration_ms)", "Mean end-to-end request time."),
    Metric(
        "latency_p50_ms",
        "Median latency",
        "ms",
        "quantile_cont(r.duration_ms, 0.5)",
        "Median end-to-end request time.",
    ),
    Metric(
        "latency_p95_ms",
        "95th percentile latency",
        "ms",
        "quantile_cont(r.duration_ms, 0.95)",
        "End-to-end time that 95 % of requests stay under.",
    ),
    Metric(
        "prompt_p50",
        "Median prompt",
        "tokens",
        "quantile_cont(r.prompt_tokens, 0.5)",
        "Median prompt size in tokens.",
    ),
    Metric(
        "prompt_p95",
        "95th percentile prompt",
        "tokens",
        "quantile_cont(r.prompt_tokens, 0.95)",
        "Prompt size that 95 % of requests stay under.",
    ),
    Metric(
        "streamed_requests",
        "Streamed requests",
        "count",
        "count(r.start_time) FILTER (WHERE r.streamed)",
        "Requests answered as a stream (first token before the end).",
    ),
    Metric(
        "ttft_p50_ms",
        "Median time to first token",
        "ms",
        "quantile_cont(r.ttft_ms, 0.5)",
        "Median time from the request to its first token, streamed requests only.",
    ),
    Metric(
        "ttft_p95_ms",
        "95th percentile time to first token",
        "ms",
        "quantile_cont(r.ttft_ms, 0.95)",
        "Time to first token that 95 % of streamed requests stay under.",
    ),
    Metric(
        "output_tps_p50",
        "Median output speed",
        "tokens_per_s",
        "quantile_cont(r.output_tps, 0.5)",
        "Median completion tokens per second after the first token, streamed requests long enough to time.",
    ),
    Metric(
        "speed_too_short",
        "Too short to time",
        "count",
        "count(r.start_time) FILTER (WHERE r.too_short)",
        "Streamed requests left out of output speed: fewer than 16 completion tokens or under "
        "200 ms after the first token.",
    ),
    Metric(
        "output_tps_p95",
        "95th percentile output speed",
        "tokens_per_s",
        "quantile_cont(r.output_tps, 0.95)",
        "Output speed that only the fastest 5 % of streamed requests exceed.",
    ),
)

BY_NAME: dict[str, Metric] = {m.name: m for m in METRICS}


# One more macro, not a measure: a group's part of the whole, e.g.
# metric.share(metric.requests(r)) AS requests_share
SHARE = "CREATE OR REPLACE MACRO metric.share(value) AS value / NULLIF(sum(value) OVER (), 0)"


def macro_statements() -> list[str]:
    """DDL that makes every metric a macro `metric.<name>(r)` in a DuckDB database."""
    return [
        "CREATE SCHEMA IF NOT EXISTS metric",
        *(f"CREATE OR REPLACE MACRO metric.{m.name}(r) AS {m.sql}" for m in METRICS),
        SHARE,
    ]
