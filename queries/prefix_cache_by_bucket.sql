-- prefix_cache_by_bucket: the prefix cache's hit rate per display bucket, GPU node and
-- model, every bucket of the range for every pair with requests in it: requests, prompt
-- and cached tokens (sum them to combine pairs), and cache_hit_rate, NULL (a gap, not 0)
-- in a bucket without prompt tokens, and throughout for a pair that reports no cached
-- token in the range (prefix_cache: "not reported"). The $top_names busiest models
-- (setup/views.sql top_models), by name (shown_name).
WITH sums AS (
    SELECT
        r.bucket_start,
        r.node::VARCHAR AS node,
        r.model_group::VARCHAR AS model,
        metric.requests(r) AS requests,
        metric.prompt_tokens(r) AS prompt_tokens,
        metric.cached_tokens(r) AS cached_tokens,
        metric.cache_hit_rate(r) AS cache_hit_rate
    FROM serving_cache r
    GROUP BY ALL
),
pairs AS (
    SELECT node, model, sum(cached_tokens) > 0 AS reported
    FROM sums
    WHERE model IS NULL OR model IN (SELECT model FROM top_models($top_names))
    GROUP BY ALL
)
SELECT
    b.bucket,
    b.bucket_start,
    p.node,
    shown_name(p.model) AS model,
    coalesce(s.requests, 0)::BIGINT AS requests,
    coalesce(s.prompt_tokens, 0)::BIGINT AS prompt_tokens,
    coalesce(s.cached_tokens, 0)::BIGINT AS cached_tokens,
    CASE WHEN p.reported THEN s.cache_hit_rate END AS cache_hit_rate
FROM (SELECT DISTINCT bucket, bucket_start FROM buckets) b
CROSS JOIN pairs p
LEFT JOIN sums s
    ON s.bucket_start = b.bucket_start
    AND s.node IS NOT DISTINCT FROM p.node
    AND s.model IS NOT DISTINCT FROM p.model
ORDER BY b.bucket_start, p.node, p.model
