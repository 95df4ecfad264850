-- totals: the headline figures of the filtered range (one row: the cards); sums from the
-- rollups, the median latency from the series (within 1 %) or the requests themselves.
-- The distinct count goes apart: beside other aggregates, DuckDB kept every row of the
-- range in memory for it (115 MB for a year of 10M requests).
WITH sums AS (
    SELECT
        metric.requests(r) AS requests,
        metric.failures(r) AS failures,
        metric.success_rate(r) AS success_rate,
        metric.spend_usd(r) AS spend_usd,
        metric.prompt_tokens(r) AS prompt_tokens,
        metric.cached_tokens(r) AS cached_tokens,
        metric.uncached_prompt_tokens(r) AS uncached_prompt_tokens,
        metric.completion_tokens(r) AS completion_tokens,
        metric.reasoning_tokens(r) AS reasoning_tokens,
        metric.answer_tokens(r) AS answer_tokens,
        metric.total_tokens(r) AS total_tokens,
        metric.cache_hit_rate(r) AS cache_hit_rate,
        metric.latency_avg_ms(r) AS latency_avg_ms
    FROM scoped_sums r
),
people AS (
    SELECT metric.active_users(r) AS active_users FROM scoped_sums r
)
SELECT
    s.requests,
    s.failures,
    s.success_rate,
    s.spend_usd,
    p.active_users,
    s.prompt_tokens,
    s.cached_tokens,
    s.uncached_prompt_tokens,
    s.completion_tokens,
    s.reasoning_tokens,
    s.answer_tokens,
    s.total_tokens,
    s.cache_hit_rate,
    s.latency_avg_ms,
    (SELECT value FROM latency_quantile(0.5, false)) AS latency_p50_ms
FROM sums s, people p
