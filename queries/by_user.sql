-- by_user: usage per person (or ownerless key), with each one's share of the total
SELECT
    r."user"::VARCHAR AS "user",
    metric.requests(r) AS requests,
    metric.failures(r) AS failures,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    metric.cache_hit_rate(r) AS cache_hit_rate,
    metric.requests(r) / sum(metric.requests(r)) OVER () AS requests_share,
    metric.total_tokens(r) / NULLIF(sum(metric.total_tokens(r)) OVER (), 0) AS tokens_share,
    metric.spend_usd(r) / NULLIF(sum(metric.spend_usd(r)) OVER (), 0) AS spend_share
FROM scoped r
GROUP BY r."user"
ORDER BY spend_usd DESC, total_tokens DESC, "user"
