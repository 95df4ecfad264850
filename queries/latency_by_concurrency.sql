-- latency_by_concurrency: where a node saturates: requests grouped by how many were in
-- flight on their node when they started (themselves included, capped at 64), with the
-- median latency, time to first token and output speed of each group
SELECT
    q.node,
    q.in_flight,
    q.requests,
    q.latency_p50_ms,
    q.ttft_p50_ms,
    q.output_tps_p50
FROM serving_quantiles('levels', false, true, false, true) q
ORDER BY node, in_flight
