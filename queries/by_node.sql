-- by_node: traffic per GPU node, with each node's share of requests and tokens. The
-- $top_names busiest by name (shown_name); the rest in one row, node NULL, `folded` of
-- them (setup/views.sql, kept_names)
WITH measures AS (
    SELECT r.node AS name, metric.requests(r) AS measure FROM scoped_sums r GROUP BY r.node
),
kept AS (SELECT * FROM kept_names(measures, $top_names, NULL, $shown::VARCHAR[]))
SELECT
    shown_name(r.kept_name::VARCHAR) AS node,
    CASE WHEN NOT r.kept THEN count(DISTINCT r.node) END AS folded,
    metric.requests(r) AS requests,
    metric.failures(r) AS failures,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    metric.share(metric.requests(r)) AS requests_share,
    metric.share(metric.total_tokens(r)) AS tokens_share
FROM (
    SELECT s.*, k.kept, CASE WHEN k.kept THEN s.node END AS kept_name
    FROM scoped_sums s JOIN kept k ON k.name IS NOT DISTINCT FROM s.node
) r
GROUP BY r.kept, r.kept_name
ORDER BY folded NULLS FIRST, requests DESC, node
