-- by_user: usage per person (or ownerless key), with each one's share of the total
SELECT
    r."user"::VARCHAR AS "user",
    metric.requests(r) AS requests,
    metric.failures(r) AS failures,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    metric.cache_hit_rate(r) AS cache_hit_rate,
    metric.share(metric.requests(r)) AS requests_share,
    metric.share(metric.total_tokens(r)) AS tokens_share,
    metric.share(metric.spend_usd(r)) AS spend_share
FROM scoped_sums r
GROUP BY r."user"
ORDER BY spend_usd DESC, total_tokens DESC, "user"
