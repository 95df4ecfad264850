-- node_share_by_bucket: how the proxy spread the requests over the GPU nodes, per display
-- bucket: each node's requests and failed requests, its share of the bucket's requests
-- (NULL in a bucket without any: a gap, not 0 %), and `troubled`: at least a tenth of
-- the node's requests in the bucket failed, and at least 5 (what marks a node going
-- down, above the few failures of every day and the one failure of a quiet hour).
-- Requests that reached no node (node `unknown`: failed before routing) are left out:
-- the shares are of the requests the nodes got. Every bucket of the range for
-- every node with requests in it, so a node that went down shows as a dip to 0.
-- Read from the Nodes page's partials (requests per local date and node, failures per
-- 15-minute slot), as prefix_cache_by_bucket and failures_by_bucket are.
WITH sent AS (
    SELECT bucket_start, node::VARCHAR AS node, sum(n)::BIGINT AS requests
    FROM serving_cache
    WHERE node <> 'unknown'
    GROUP BY ALL
),
failed AS (
    SELECT b.bucket_start, r.node::VARCHAR AS node, metric.failures(r) AS failures
    FROM failure_slots r
    JOIN buckets b ON b.q15 = r.q15
    WHERE r.node <> 'unknown'
    GROUP BY ALL
),
nodes AS (
    SELECT DISTINCT node FROM sent
)
SELECT
    b.bucket,
    b.bucket_start,
    n.node,
    coalesce(s.requests, 0)::BIGINT AS requests,
    coalesce(f.failures, 0)::BIGINT AS failures,
    coalesce(s.requests, 0) / NULLIF(sum(coalesce(s.requests, 0)) OVER (PARTITION BY b.bucket_start), 0)
        AS requests_share,
    coalesce(f.failures, 0) >= greatest(5, 0.1 * coalesce(s.requests, 0)) AS troubled
FROM (SELECT DISTINCT bucket, bucket_start FROM buckets) b
CROSS JOIN nodes n
LEFT JOIN sent s ON s.bucket_start = b.bucket_start AND s.node IS NOT DISTINCT FROM n.node
LEFT JOIN failed f ON f.bucket_start = b.bucket_start AND f.node IS NOT DISTINCT FROM n.node
ORDER BY b.bucket_start, n.node
