-- node_verdicts: what the verdict on each GPU node is judged from (dashboard/verdicts.py),
-- per node and model (LiteLLM's model group): traffic, failures, and for streamed
-- requests the p95 time to first token and the median output speed. A node is judged
-- against the other nodes serving the same model, and against its own previous period
-- (the same query over Filters.previous()). Requests that reached no node are left out.
WITH counts AS (
    SELECT
        r.node::VARCHAR AS node,
        r.model_group::VARCHAR AS model,
        metric.requests(r) AS requests,
        metric.failures(r) AS failures,
        metric.failure_rate(r) AS failure_rate,
        metric.streamed_requests(r) AS streamed_requests
    FROM scoped_sums r
    WHERE r.node::VARCHAR <> 'unknown'
    GROUP BY ALL
)
SELECT
    c.node,
    c.model,
    c.requests,
    c.failures,
    c.failure_rate,
    c.streamed_requests,
    q.ttft_p95_ms,
    q.output_tps_p50
FROM counts c
LEFT JOIN serving_quantiles('perf', false, true, true, false) q
    ON q.node IS NOT DISTINCT FROM c.node AND q.model_group IS NOT DISTINCT FROM c.model
ORDER BY c.node, c.requests DESC, c.model
