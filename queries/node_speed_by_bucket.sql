-- node_speed_by_bucket: per display bucket and GPU node, the median time to first token,
-- output speed and latency (buckets without requests on a node are left out)
SELECT
    b.bucket,
    b.bucket_start,
    r.node::VARCHAR AS node,
    metric.requests(r) AS requests,
    metric.ttft_p50_ms(r) AS ttft_p50_ms,
    metric.output_tps_p50(r) AS output_tps_p50,
    metric.latency_p50_ms(r) AS latency_p50_ms
FROM scoped r
JOIN buckets b ON b.q15 = r.q15
GROUP BY b.bucket_start, b.bucket, r.node
ORDER BY b.bucket_start, node
