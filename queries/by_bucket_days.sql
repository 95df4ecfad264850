-- by_bucket_days: by_bucket for daily buckets in the lab's display zone, from the series
-- (the runner asks for it instead of by_bucket when the plan allows: no person, key,
-- model, node or client narrows the view, and the series' zone is the view's); the same
-- columns, the median latency within 1 %
WITH days AS (
    SELECT DISTINCT bucket, bucket_start FROM buckets
),
medians AS (
    SELECT local_date, value FROM latency_quantile(0.5, true)
)
SELECT
    b.bucket,
    b.bucket_start,
    metric.requests(r) AS requests,
    metric.successes(r) AS successes,
    metric.failures(r) AS failures,
    metric.success_rate(r) AS success_rate,
    metric.spend_usd(r) AS spend_usd,
    metric.total_tokens(r) AS total_tokens,
    metric.uncached_prompt_tokens(r) AS uncached_prompt_tokens,
    metric.cached_tokens(r) AS cached_tokens,
    metric.answer_tokens(r) AS answer_tokens,
    metric.reasoning_tokens(r) AS reasoning_tokens,
    metric.cache_hit_rate(r) AS cache_hit_rate,
    any_value(m.value) AS latency_p50_ms
FROM days b
LEFT JOIN scoped_series r ON r.local_date = b.bucket::DATE
LEFT JOIN medians m ON m.local_date = b.bucket::DATE
GROUP BY b.bucket_start, b.bucket
ORDER BY b.bucket_start
