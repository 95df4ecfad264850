-- api_cost_by_model: per model group, the API model it is priced as and the cost at API
-- prices (setup/views.sql `priced`) beside requests, tokens and spend; api_cost_usd is
-- NULL when none of its requests is priced (a price for part of the range prices part);
-- `taken`: when the newest of the prices it is priced at here were read
-- The $top_names busiest by name (shown_name); the rest in one row,
-- model NULL, `folded` of them (setup/views.sql, kept_names)
WITH measures AS (
    SELECT r.model_group AS name, metric.requests(r) AS measure FROM scoped_sums r GROUP BY r.model_group
),
kept AS (SELECT * FROM kept_names(measures, $top_names, NULL, NULL))
SELECT
    shown_name(r.kept_name::VARCHAR) AS model,
    CASE WHEN NOT r.kept THEN count(DISTINCT r.model_group) END AS folded,
    string_agg(DISTINCT r.reference, ', ' ORDER BY r.reference) AS reference,
    max(r.taken) AS taken,
    metric.requests(r) AS requests,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    api_cost_usd(r) AS api_cost_usd,
    priced_requests(r) AS priced_requests,
    unpriced_requests(r) AS unpriced_requests
FROM (
    SELECT s.*, k.kept, CASE WHEN k.kept THEN s.model_group END AS kept_name
    FROM priced('scoped_sums') s JOIN kept k ON k.name IS NOT DISTINCT FROM s.model_group
) r
GROUP BY r.kept, r.kept_name
ORDER BY folded NULLS FIRST, requests DESC, model
