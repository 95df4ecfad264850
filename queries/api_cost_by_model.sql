-- api_cost_by_model: per model group, the API model it is priced as and the cost at API
-- prices (setup/views.sql `priced`) beside requests, tokens and spend; api_cost_usd is
-- NULL when none of its requests is priced (a price for part of the range prices part);
-- `taken`: when the newest of the prices it is priced at here were read
SELECT
    r.model_group::VARCHAR AS model,
    string_agg(DISTINCT r.reference, ', ' ORDER BY r.reference) AS reference,
    max(r.taken) AS taken,
    metric.requests(r) AS requests,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    api_cost_usd(r) AS api_cost_usd,
    priced_requests(r) AS priced_requests,
    unpriced_requests(r) AS unpriced_requests
FROM priced('scoped_sums') r
GROUP BY r.model_group
ORDER BY requests DESC, model
