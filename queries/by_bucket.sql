-- by_bucket: per display bucket (local hour or day), empty buckets included: the cards'
-- sparklines, tokens by kind (the four kinds add up to all tokens), successes and failures
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
    metric.latency_p50_ms(r) AS latency_p50_ms
FROM buckets b
LEFT JOIN scoped r ON r.q15 = b.q15
GROUP BY b.bucket_start, b.bucket
ORDER BY b.bucket_start
