-- by_model: usage per public model name (LiteLLM's model group), with shares. The
-- $top_names busiest by name (shown_name); the rest in one row, model NULL, `folded` of
-- them (setup/views.sql, kept_names)
WITH measures AS (
    SELECT r.model_group AS name, metric.requests(r) AS measure FROM scoped_sums r GROUP BY r.model_group
),
kept AS (SELECT * FROM kept_names(measures, $top_names, NULL, $shown::VARCHAR[]))
SELECT
    shown_name(r.kept_name::VARCHAR) AS model,
    CASE WHEN NOT r.kept THEN count(DISTINCT r.model_group) END AS folded,
    metric.requests(r) AS requests,
    metric.failures(r) AS failures,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    metric.cache_hit_rate(r) AS cache_hit_rate,
    metric.share(metric.requests(r)) AS requests_share,
    metric.share(metric.total_tokens(r)) AS tokens_share
FROM (
    SELECT s.*, k.kept, CASE WHEN k.kept THEN s.model_group END AS kept_name
    FROM scoped_sums s JOIN kept k ON k.name IS NOT DISTINCT FROM s.model_group
) r
GROUP BY r.kept, r.kept_name
ORDER BY folded NULLS FIRST, requests DESC, model
