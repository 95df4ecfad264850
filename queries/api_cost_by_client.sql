-- api_cost_by_client: per client tool, the cost at API prices (setup/views.sql `priced`)
-- beside requests and spend; api_cost_usd is NULL when none of its requests is priced,
-- and unpriced_requests says how many were left out
SELECT
    r.client::VARCHAR AS client,
    metric.requests(r) AS requests,
    metric.spend_usd(r) AS spend_usd,
    api_cost_usd(r) AS api_cost_usd,
    priced_requests(r) AS priced_requests,
    unpriced_requests(r) AS unpriced_requests
FROM priced('scoped_sums') r
GROUP BY r.client
ORDER BY requests DESC, client
