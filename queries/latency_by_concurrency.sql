-- latency_by_concurrency: where a node saturates: requests grouped by how many were in
-- flight on their node when they started (themselves included, capped at 64), with the
-- median latency, time to first token and output speed of each group
WITH bounds AS (
    SELECT
        getvariable('filters').range_start::TIMESTAMPTZ AS lo,
        getvariable('filters').range_end::TIMESTAMPTZ AS hi
),
events AS (
    SELECT r.node, greatest(r.start_time, lo) AS moment, 1 AS delta FROM overlapping r, bounds
    UNION ALL
    SELECT r.node, r.end_time, -1 FROM overlapping r, bounds WHERE r.end_time < hi
),
changes AS (
    SELECT node, moment, sum(delta) AS delta FROM events GROUP BY node, moment
),
levels AS (
    SELECT
        node,
        moment,
        sum(delta) OVER (PARTITION BY node ORDER BY moment ROWS UNBOUNDED PRECEDING) AS in_flight
    FROM changes
)
SELECT
    r.node::VARCHAR AS node,
    least(l.in_flight, 64)::INTEGER AS in_flight,
    metric.requests(r) AS requests,
    metric.latency_p50_ms(r) AS latency_p50_ms,
    metric.ttft_p50_ms(r) AS ttft_p50_ms,
    metric.output_tps_p50(r) AS output_tps_p50
FROM scoped r
JOIN levels l ON l.node = r.node AND l.moment = r.start_time
GROUP BY 1, 2
ORDER BY node, in_flight
