-- routing: what LiteLLM's router did per GPU node (model NULL) and per node and model (its
-- model group), from the columns recent LiteLLM releases write (docs/store.md:
-- attempted_fallbacks, attempted_retries, original_model_group, litellm_overhead_ms;
-- NULL, unknown, in older rows and for requests that never reached the router):
--   requests, failures: all of them;
--   routing_known: requests whose row says how many fallbacks were tried;
--   fallback_requests: of those, served (or last failed) by a fallback, not the group asked for;
--   retried_requests, retries: requests retried in their group, and the retries made;
--   fell_back_from: the model groups the clients asked for, where a fallback served them;
--   overhead_p50_ms, overhead_p95_ms: the time spent in LiteLLM itself (unknown for
--   streamed requests and failures, which LiteLLM does not time).
-- Read from the Nodes page's partials (queries/serving.py): no rollup carries the
-- router's columns. Rows per model: the $top_names busiest models (setup/views.sql
-- top_models), by name (shown_name).
WITH counts AS (
    SELECT
        r.node::VARCHAR AS node,
        r.model_group::VARCHAR AS model,
        metric.requests(r) AS requests,
        metric.failures(r) AS failures,
        metric.routing_known(r) AS routing_known,
        metric.fallback_requests(r) AS fallback_requests,
        metric.retried_requests(r) AS retried_requests,
        metric.retries(r) AS retries,
        string_agg(DISTINCT r.fell_back_from::VARCHAR, ', ' ORDER BY r.fell_back_from::VARCHAR)
            AS fell_back_from
    FROM serving_routing r
    GROUP BY GROUPING SETS ((r.node), (r.node, r.model_group))
),
overhead AS (
    SELECT node::VARCHAR AS node, NULL::VARCHAR AS model, overhead_p50_ms, overhead_p95_ms
    FROM serving_quantiles('perf', false, true, false, false)
    UNION ALL
    SELECT node::VARCHAR, model_group::VARCHAR, overhead_p50_ms, overhead_p95_ms
    FROM serving_quantiles('perf', false, true, true, false)
)
SELECT
    c.node,
    shown_name(c.model) AS model,
    c.requests,
    c.failures,
    c.routing_known,
    c.fallback_requests,
    c.retried_requests,
    c.retries,
    shown_name(c.fell_back_from) AS fell_back_from,
    o.overhead_p50_ms,
    o.overhead_p95_ms
FROM counts c
LEFT JOIN overhead o ON o.node IS NOT DISTINCT FROM c.node AND o.model IS NOT DISTINCT FROM c.model
WHERE c.model IS NULL OR c.model IN (SELECT model FROM top_models($top_names))
ORDER BY c.model IS NOT NULL, c.requests DESC, c.node, c.model
