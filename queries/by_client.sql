-- by_client: requests and tokens per client tool (OpenCode, Claude Code, SDKs...), with shares
SELECT
    r.client::VARCHAR AS client,
    metric.requests(r) AS requests,
    metric.total_tokens(r) AS total_tokens,
    metric.active_users(r) AS active_users,
    metric.share(metric.requests(r)) AS requests_share,
    metric.share(metric.total_tokens(r)) AS tokens_share
FROM scoped_sums r
GROUP BY r.client
ORDER BY requests DESC, client
