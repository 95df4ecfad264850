-- node_performance: serving figures per GPU node: traffic, failures, time to first token
-- and output speed (streamed requests; speed only where long enough to time), latency
-- and prompt size
SELECT
    r.node::VARCHAR AS node,
    metric.requests(r) AS requests,
    metric.share(metric.requests(r)) AS requests_share,
    metric.failures(r) AS failures,
    metric.failure_rate(r) AS failure_rate,
    metric.streamed_requests(r) AS streamed_requests,
    metric.ttft_p50_ms(r) AS ttft_p50_ms,
    metric.ttft_p95_ms(r) AS ttft_p95_ms,
    metric.output_tps_p50(r) AS output_tps_p50,
    metric.output_tps_p95(r) AS output_tps_p95,
    metric.speed_too_short(r) AS speed_too_short,
    metric.latency_p50_ms(r) AS latency_p50_ms,
    metric.latency_p95_ms(r) AS latency_p95_ms,
    metric.prompt_p50(r) AS prompt_p50,
    metric.prompt_p95(r) AS prompt_p95
FROM scoped r
GROUP BY r.node
ORDER BY requests DESC, node
