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
        bucket_start,
        greatest(bucket_start, lo) AS span_start,
        coalesce(lead(bucket_start) OVER (ORDER BY bucket_start), hi) AS span_end
    FROM (SELECT DISTINCT bucket, bucket_start FROM buckets), bounds
),
per_bucket AS (
    SELECT b.bucket_start, f.node::VARCHAR AS node, max(f.peak) AS peak, sum(f.request_us) AS request_us
    FROM flight_slots f
    JOIN buckets b ON b.q15 = f.q15
    GROUP BY ALL
)
SELECT
    s.bucket,
    s.span_start AS bucket_start,
    n.node,
    coalesce(p.peak, 0)::BIGINT AS peak_in_flight,
    coalesce(p.request_us, 0) / (epoch_us(s.span_end) - epoch_us(s.span_start)) AS avg_in_flight
FROM spans s
CROSS JOIN (SELECT DISTINCT node::VARCHAR AS node FROM flight_slots) n
LEFT JOIN per_bucket p ON p.bucket_start = s.bucket_start AND p.node = n.node
ORDER BY bucket_start, node
