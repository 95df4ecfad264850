-- load_table: how each GPU node serves under load, per node (model NULL) and per node and
-- model, for each level in flight: how many requests its node had in flight when a
-- request started (itself included, capped at 64 as in latency_by_concurrency: "64"
-- means 64 or more; a node+model row's level is its node's, all models counted).
--   requests, failures, failure_rate, latency_avg_ms, latency_p50_ms, latency_p95_ms:
--     the metrics of queries/metrics.py over the requests that started at that level;
--   ttft_p95_ms: p95 time to first token of the streamed ones (NULL: none streamed): what
--     a streaming client waits for, where latency also grows with the answer's length;
--   seconds_at_level: the seconds of the range the node spent with exactly that many
--     requests in flight (a request begun before the range counts for its part inside);
--   requests_per_s: requests / seconds_at_level: the requests that brought the node to
--     that level per second spent at it; in a steady load test at concurrency C, the
--     throughput at C; at level 1, one request after another, 1 / their latency.
--   stable_level: the highest level up to which p95 latency stays <= $stable_p95_ms at
--     every level with requests (levels no request started at are skipped, not failed);
--     NULL when the lowest level with requests already exceeds it. stable: in_flight <=
--     stable_level. Per node rows use the node's p95, node+model rows the model's (over the
--     days the partials answer, p95 is within 1 % of the exact one, queries/serving.py).
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
        metric.latency_avg_ms(r) AS latency_avg_ms
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
rows AS (
    SELECT
        c.node,
        c.model,
        c.in_flight,
        c.requests,
        c.failures,
        c.failure_rate,
        c.latency_avg_ms,
        q.latency_p50_ms,
        q.latency_p95_ms,
        q.ttft_p95_ms,
        t.seconds_at_level,
        c.requests / NULLIF(t.seconds_at_level, 0) AS requests_per_s,
        -- the lowest level of the group where p95 is over the target (NULL: none)
        min(c.in_flight) FILTER (WHERE q.latency_p95_ms > $stable_p95_ms) OVER (PARTITION BY c.node, c.model)
            AS first_over,
        max(c.in_flight) OVER (PARTITION BY c.node, c.model) AS top
    FROM counts c
    LEFT JOIN quantiles q
        ON q.node IS NOT DISTINCT FROM c.node
        AND q.model IS NOT DISTINCT FROM c.model
        AND q.in_flight = c.in_flight
    LEFT JOIN at_level t ON t.node IS NOT DISTINCT FROM c.node AND t.in_flight = c.in_flight
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
    stable_level,
    coalesce(in_flight <= stable_level, false) AS stable
FROM stable
WHERE model IS NULL OR model IN (SELECT model FROM top_models($top_names))
ORDER BY node, model NULLS FIRST, in_flight
