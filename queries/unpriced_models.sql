-- unpriced_models: the models with requests in the range that the price book gives no
-- price for on their day ("not priced" on the page, never counted as 0), with how many:
-- the $top_names busiest, by name (setup/views.sql shown_name)
SELECT
    shown_name(r.model_group::VARCHAR) AS model,
    metric.requests(r) AS requests,
    metric.total_tokens(r) AS total_tokens
FROM priced('scoped_sums') r
WHERE NOT r.priced
GROUP BY r.model_group
ORDER BY requests DESC, model
LIMIT $top_names
