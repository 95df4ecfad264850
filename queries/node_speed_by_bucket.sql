-- node_speed_by_bucket: per display bucket and GPU node, the median time to first token,
-- output speed and latency (buckets without requests on a node are left out)
SELECT
    b.bucket,
    q.bucket_start,
    q.node,
    q.requests,
    q.ttft_p50_ms,
    q.output_tps_p50,
    q.latency_p50_ms
FROM serving_quantiles('speed', true, true, false, false) q
JOIN (SELECT DISTINCT bucket, bucket_start FROM buckets) b ON b.bucket_start = q.bucket_start
ORDER BY q.bucket_start, q.node
