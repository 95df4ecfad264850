-- newest_by_node: per GPU node, its newest request (all time, whatever the range) and its
-- requests and failures in the range (the ETL status page asks for the last 24 hours), so
-- that a node gone quiet stands out
WITH recent AS (
    SELECT
        r.node::VARCHAR AS node,
        metric.requests(r) AS requests_24h,
        metric.failures(r) AS failures_24h
    FROM scoped_sums r
    GROUP BY r.node
)
SELECT
    a.node::VARCHAR AS node,
    max(a.last_start) AS newest_request,
    coalesce(any_value(recent.requests_24h), 0) AS requests_24h,
    coalesce(any_value(recent.failures_24h), 0) AS failures_24h
FROM in_scope_sums a
LEFT JOIN recent ON recent.node = a.node::VARCHAR
GROUP BY a.node
ORDER BY newest_request DESC, node
