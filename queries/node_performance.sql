-- node_performance: serving figures per GPU node: traffic, failures, time to first token
-- and output speed (streamed requests; speed only where long enough to time), latency
-- and prompt size
WITH counts AS (
    SELECT
        r.node::VARCHAR AS node,
        metric.requests(r) AS requests,
        metric.failures(r) AS failures,
        metric.failure_rate(r) AS failure_rate,
        metric.streamed_requests(r) AS streamed_requests,
        metric.speed_too_short(r) AS speed_too_short
    FROM scoped_sums r
    GROUP BY ALL
)
SELECT
    c.node,
    c.requests,
    metric.share(c.requests) AS requests_share,
    c.failures,
    c.failure_rate,
    c.streamed_requests,
    q.ttft_p50_ms,
    q.ttft_p95_ms,
    q.output_tps_p50,
    q.output_tps_p95,
    c.speed_too_short,
    q.latency_p50_ms,
    q.latency_p95_ms,
    q.prompt_p50,
    q.prompt_p95
FROM counts c
LEFT JOIN serving_quantiles('perf', false, true, false, false) q ON q.node IS NOT DISTINCT FROM c.node
ORDER BY requests DESC, node
