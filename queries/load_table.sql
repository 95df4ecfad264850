-- load_table: how each GPU node serves under load, per node (model NULL) and per node and
-- model, for each level in flight: how many requests its node had in flight when a
-- request started (itself included, capped at 64 as in latency_by_concurrency: "64"
-- means 64 or more; a node+model row's level is its node's, all models counted).
--   requests, failures, failure_rate, latency_avg_ms, latency_p50_ms, latency_p95_ms:
--     the metrics of contract/measures.py over the requests that started at that level;
--   ttft_p95_ms: p95 time to first token of the streamed ones (NULL: none streamed): what
--     a streaming client waits for, where latency also grows with the answer's length;
--   seconds_at_level: the seconds of the range the node spent with exactly that many
--     requests in flight (a request begun before the range counts for its part inside);
--   requests_per_s: requests / seconds_at_level: the requests that brought the node to
--     that level per second spent at it; in a steady load test at concurrency C, the
--     throughput at C; at level 1, one request after another, 1 / their latency.
--   streamed_requests: how many of them were streamed (metric streamed_requests);
--   judged_on, judged_p95_ms: the p95 the row is held to $stable_p95_ms by, and its value:
--     'ttft_p95_ms' where most of the row's requests were streamed (a long answer takes
--     long however soon it starts: whole-request latency over the target said nothing
--     about load), else 'latency_p95_ms';
--   within_target: judged_p95_ms <= $stable_p95_ms (the row's own; NULL: no value);
--   stable_level: the highest level up to which every level with a judged p95 is within
--     the target (levels without one are skipped, not failed); NULL when the lowest such
--     level already exceeds it. stable: in_flight <= stable_level. Per node rows use the
--     node's p95, node+model rows the model's (over the days the partials answer, p95 is
--     within 1 % of the exact one, queries/serving.py).
-- Requests that reached no node (node `unknown`: failed before routing) are left out: no
-- node served them, under any load. Rows per model: the $top_names busiest models
-- (setup/views.sql top_models), by name (shown_name).
WITH counts AS (
    SELECT
        r.node::VARCHAR AS node,
        r.model_group::VARCHAR AS model,
        r.in_flight,
        metric.requests(r) AS requests,
        metric.failures(r) AS failures,
        metric.failure_rate(r) AS failure_rate,
        metric.latency_avg_ms(r) AS latency_avg_ms,
        metric.streamed_requests(r) AS streamed_requests
    FROM serving_load r
    WHERE r.node <> 'unknown'
    GROUP BY GROUPING SETS ((r.node, r.in_flight), (r.node, r.model_group, r.in_flight))
),
quantiles AS (
    SELECT node, NULL::VARCHAR AS model, in_flight, latency_p50_ms, latency_p95_ms, ttft_p95_ms
    FROM serving_quantiles('levels', false, true, false, true)
    UNION ALL
    SELECT node, model_group, in_flight, latency_p50_ms, latency_p95_ms, ttft_p95_ms
    FROM serving_quantiles('levels', false, true, true, true)
),
at_level AS (
    SELECT node::VARCHAR AS node, in_flight, sum(us) / 1e6 AS seconds_at_level
    FROM serving_level_time
    WHERE in_flight > 0
    GROUP BY ALL
),
joined AS (
    SELECT
        c.*,
        q.latency_p50_ms,
        q.latency_p95_ms,
        q.ttft_p95_ms,
        t.seconds_at_level,
        c.requests / NULLIF(t.seconds_at_level, 0) AS requests_per_s,
        CASE WHEN 2 * c.streamed_requests > c.requests THEN 'ttft_p95_ms' ELSE 'latency_p95_ms' END
            AS judged_on
    FROM counts c
    LEFT JOIN quantiles q
        ON q.node IS NOT DISTINCT FROM c.node
        AND q.model IS NOT DISTINCT FROM c.model
        AND q.in_flight = c.in_flight
    LEFT JOIN at_level t ON t.node IS NOT DISTINCT FROM c.node AND t.in_flight = c.in_flight
),
judged AS (
    SELECT
        *,
        CASE judged_on WHEN 'ttft_p95_ms' THEN ttft_p95_ms ELSE latency_p95_ms END AS judged_p95_ms
    FROM joined
),
rows AS (
    SELECT
        *,
        judged_p95_ms <= $stable_p95_ms AS within_target,
        -- the lowest level of the group where the judged p95 is over the target (NULL: none)
        min(in_flight) FILTER (WHERE judged_p95_ms > $stable_p95_ms) OVER (PARTITION BY node, model)
            AS first_over,
        max(in_flight) FILTER (WHERE judged_p95_ms IS NOT NULL) OVER (PARTITION BY node, model) AS top
    FROM judged
),
stable AS (
    SELECT
        *,
        CASE
            WHEN first_over IS NULL THEN top
            ELSE max(in_flight) FILTER (WHERE in_flight < first_over) OVER (PARTITION BY node, model)
        END AS stable_level
    FROM rows
)
SELECT
    node,
    shown_name(model) AS model,
    in_flight,
    requests,
    failures,
    failure_rate,
    latency_avg_ms,
    latency_p50_ms,
    latency_p95_ms,
    ttft_p95_ms,
    seconds_at_level,
    requests_per_s,
    streamed_requests,
    judged_on,
    judged_p95_ms,
    within_target,
    stable_level,
    coalesce(in_flight <= stable_level, false) AS stable
FROM stable
WHERE model IS NULL OR model IN (SELECT model FROM top_models($top_names))
ORDER BY node, model NULLS FIRST, in_flight
