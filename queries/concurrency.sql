-- concurrency: requests in flight per GPU node and display bucket: the peak, and the
-- time-weighted average (request-seconds in the bucket over its length). A request that
-- began before the range, or ends after it, counts for its part inside the range.
WITH bounds AS (
    SELECT
        getvariable('filters').range_start::TIMESTAMPTZ AS lo,
        getvariable('filters').range_end::TIMESTAMPTZ AS hi
),
spans AS (
    SELECT
        bucket,
        greatest(bucket_start, lo) AS span_start,
        coalesce(lead(bucket_start) OVER (ORDER BY bucket_start), hi) AS span_end
    FROM (SELECT DISTINCT bucket, bucket_start FROM buckets), bounds
),
events AS (
    SELECT r.node, greatest(r.start_time, lo) AS moment, 1 AS delta FROM overlapping r, bounds
    UNION ALL
    SELECT r.node, r.end_time, -1 FROM overlapping r, bounds WHERE r.end_time < hi
    UNION ALL  -- a reading of every node's level at the start of every bucket
    SELECT n.node, s.span_start, 0 FROM (SELECT DISTINCT node FROM overlapping) n, spans s
),
changes AS (
    -- all events at one instant count together, so a request that ends exactly when
    -- another starts does not overlap it
    SELECT node, moment, sum(delta) AS delta FROM events GROUP BY node, moment
),
segments AS (
    SELECT
        node,
        moment,
        sum(delta) OVER w AS in_flight,
        coalesce(lead(moment) OVER w, (SELECT hi FROM bounds)) AS until
    FROM changes
    WINDOW w AS (PARTITION BY node ORDER BY moment ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
)
SELECT
    s.bucket,
    s.span_start AS bucket_start,
    g.node::VARCHAR AS node,
    max(g.in_flight) AS peak_in_flight,
    sum(g.in_flight * (epoch_us(g.until) - epoch_us(g.moment)))
        / (epoch_us(s.span_end) - epoch_us(s.span_start)) AS avg_in_flight
FROM segments g
JOIN spans s ON g.moment >= s.span_start AND g.moment < s.span_end
GROUP BY s.bucket, s.span_start, s.span_end, g.node
ORDER BY bucket_start, node
