-- failures_by_bucket: failed requests per display bucket, GPU node and error class
SELECT
    b.bucket,
    b.bucket_start,
    r.node::VARCHAR AS node,
    coalesce(r.error_class::VARCHAR, 'unknown') AS error_class,
    metric.failures(r) AS failures
FROM failure_slots r
JOIN buckets b ON b.q15 = r.q15
GROUP BY b.bucket_start, b.bucket, r.node, r.error_class
ORDER BY b.bucket_start, node, error_class
