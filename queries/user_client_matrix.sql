-- user_client_matrix: which people use which clients, and what it costs (one row per user
-- and client used)
SELECT
    r."user"::VARCHAR AS "user",
    r.client::VARCHAR AS client,
    metric.requests(r) AS requests,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd
FROM scoped_sums r
GROUP BY r."user", r.client
ORDER BY "user", requests DESC, client
