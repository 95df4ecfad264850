-- by_node: traffic per GPU node, with each node's share of requests and tokens
SELECT
    r.node::VARCHAR AS node,
    metric.requests(r) AS requests,
    metric.failures(r) AS failures,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    metric.share(metric.requests(r)) AS requests_share,
    metric.share(metric.total_tokens(r)) AS tokens_share
FROM scoped_sums r
GROUP BY r.node
ORDER BY requests DESC, node
