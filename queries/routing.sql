-- routing: what LiteLLM's router did per GPU node (model NULL) and per node and model (its
-- model group), from the
-- columns recent LiteLLM releases write (docs/store.md: attempted_fallbacks,
-- attempted_retries, original_model_group, litellm_overhead_ms; NULL, unknown, in older
-- rows and for requests that never reached the router):
--   requests, failures: all of them;
--   routing_known: requests whose row says how many fallbacks were tried;
--   fallback_requests: of those, served (or last failed) by a fallback, not the group asked for;
--   retried_requests, retries: requests retried in their group, and the retries made;
--   fell_back_from: the model groups the clients asked for, where a fallback served them;
--   overhead_p50_ms, overhead_p95_ms: the time spent in LiteLLM itself (unknown for
--   streamed requests and failures, which LiteLLM does not time).
-- Read from the range's requests: the router's columns are in no rollup.
SELECT *
FROM (
    SELECT
        r.node::VARCHAR AS node,
        r.model_group::VARCHAR AS model,
        metric.requests(r) AS requests,
        metric.failures(r) AS failures,
        metric.routing_known(r) AS routing_known,
        metric.fallback_requests(r) AS fallback_requests,
        metric.retried_requests(r) AS retried_requests,
        metric.retries(r) AS retries,
        string_agg(DISTINCT r.original_model_group::VARCHAR, ', ' ORDER BY r.original_model_group::VARCHAR)
            FILTER (WHERE r.attempted_fallbacks > 0 AND r.original_model_group IS DISTINCT FROM r.model_group)
            AS fell_back_from,
        metric.overhead_p50_ms(r) AS overhead_p50_ms,
        metric.overhead_p95_ms(r) AS overhead_p95_ms
    FROM scoped r
    GROUP BY GROUPING SETS ((r.node), (r.node, r.model_group))
)
ORDER BY model IS NOT NULL, requests DESC, node, model
