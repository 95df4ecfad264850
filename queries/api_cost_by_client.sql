-- api_cost_by_client: per client tool, the cost at API prices (setup/views.sql `priced`)
-- beside requests and spend; api_cost_usd is NULL when none of its requests is priced,
-- and unpriced_requests says how many were left out
-- The $top_names busiest by name (shown_name); the rest in one row,
-- client NULL, `folded` of them (setup/views.sql, kept_names)
WITH measures AS (
    SELECT r.client AS name, metric.requests(r) AS measure FROM scoped_sums r GROUP BY r.client
),
kept AS (SELECT * FROM kept_names(measures, $top_names, NULL, NULL))
SELECT
    shown_name(r.kept_name::VARCHAR) AS client,
    CASE WHEN NOT r.kept THEN count(DISTINCT r.client) END AS folded,
    metric.requests(r) AS requests,
    metric.spend_usd(r) AS spend_usd,
    api_cost_usd(r) AS api_cost_usd,
    priced_requests(r) AS priced_requests,
    unpriced_requests(r) AS unpriced_requests
FROM (
    SELECT s.*, k.kept, CASE WHEN k.kept THEN s.client END AS kept_name
    FROM priced('scoped_sums') s JOIN kept k ON k.name IS NOT DISTINCT FROM s.client
) r
GROUP BY r.kept, r.kept_name
ORDER BY folded NULLS FIRST, requests DESC, client
