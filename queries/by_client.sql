-- by_client: requests, tokens and spend per client tool (OpenCode, Claude Code, SDKs...),
-- with shares: what each tool costs the lab
SELECT
    r.client::VARCHAR AS client,
    metric.requests(r) AS requests,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    metric.active_users(r) AS active_users,
    metric.share(metric.requests(r)) AS requests_share,
    metric.share(metric.total_tokens(r)) AS tokens_share,
    metric.share(metric.spend_usd(r)) AS spend_share
FROM scoped_sums r
GROUP BY r.client
ORDER BY requests DESC, client
