-- newest_by_node: per GPU node, its newest request and its requests in the 24 hours
-- before $now (a node gone quiet stands out); all time, not the page's range
SELECT
    node::VARCHAR AS node,
    max(start_time) AS newest_request,
    count(*) FILTER (WHERE start_time > $now::TIMESTAMPTZ - INTERVAL 24 HOUR) AS requests_24h,
    count(*) FILTER (WHERE start_time > $now::TIMESTAMPTZ - INTERVAL 24 HOUR AND status = 'failure')
        AS failures_24h
FROM in_scope
GROUP BY node
ORDER BY newest_request DESC, node
