-- by_model: usage per public model name (LiteLLM's model group), with shares
SELECT
    r.model_group::VARCHAR AS model,
    metric.requests(r) AS requests,
    metric.failures(r) AS failures,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    metric.cache_hit_rate(r) AS cache_hit_rate,
    metric.share(metric.requests(r)) AS requests_share,
    metric.share(metric.total_tokens(r)) AS tokens_share
FROM scoped_sums r
GROUP BY r.model_group
ORDER BY requests DESC, model
