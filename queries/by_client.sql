-- by_client: requests, tokens and spend per client tool (OpenCode, Claude Code, SDKs...),
-- with shares: what each tool costs the lab. The $top_names busiest by name (shown_name);
-- the rest in one row, client NULL, `folded` of them (setup/views.sql, kept_names)
WITH measures AS (
    SELECT r.client AS name, metric.requests(r) AS measure FROM scoped_sums r GROUP BY r.client
),
kept AS (SELECT * FROM kept_names(measures, $top_names, NULL, $shown::VARCHAR[]))
SELECT
    shown_name(r.kept_name::VARCHAR) AS client,
    CASE WHEN NOT r.kept THEN count(DISTINCT r.client) END AS folded,
    metric.requests(r) AS requests,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    metric.active_users(r) AS active_users,
    metric.share(metric.requests(r)) AS requests_share,
    metric.share(metric.total_tokens(r)) AS tokens_share,
    metric.share(metric.spend_usd(r)) AS spend_share
FROM (
    SELECT s.*, k.kept, CASE WHEN k.kept THEN s.client END AS kept_name
    FROM scoped_sums s JOIN kept k ON k.name IS NOT DISTINCT FROM s.client
) r
GROUP BY r.kept, r.kept_name
ORDER BY folded NULLS FIRST, requests DESC, client
