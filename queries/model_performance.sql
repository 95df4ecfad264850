-- model_performance: serving figures per model (LiteLLM's model group): traffic, failures, time to first token
-- and output speed (streamed requests; speed only where long enough to time), latency
-- and prompt size; the $top_names busiest models (setup/views.sql top_models), by name
-- (shown_name)
WITH counts AS (
    SELECT
        r.model_group::VARCHAR AS model,
        metric.requests(r) AS requests,
        metric.failures(r) AS failures,
        metric.failure_rate(r) AS failure_rate,
        metric.streamed_requests(r) AS streamed_requests,
        metric.speed_too_short(r) AS speed_too_short
    FROM scoped_sums r
    GROUP BY ALL
)
SELECT
    shown_name(c.model) AS model,
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
LEFT JOIN serving_quantiles('perf', false, false, true, false) q ON q.model_group IS NOT DISTINCT FROM c.model
WHERE c.model IS NULL OR c.model IN (SELECT model FROM top_models($top_names))
ORDER BY requests DESC, model
