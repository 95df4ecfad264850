-- The views every query reads. The runner sets the session variable `filters` (a struct,
-- see queries/filters.py) on each query's own cursor, so the filters are applied in SQL,
-- always. Queries read these views, never the `facts` table (a test checks): a student's
-- scope (`only_keys`) is applied here, once.

-- in_scope: the requests this session may see at all (all of them, or a student's own)
CREATE VIEW in_scope AS
SELECT *
FROM facts f
WHERE getvariable('filters').only_keys::VARCHAR[] IS NULL
   OR list_contains(getvariable('filters').only_keys::VARCHAR[], f.api_key_hash::VARCHAR);

-- selected: those of them in the filters' dimensions (any time)
CREATE VIEW selected AS
SELECT *
FROM in_scope f
WHERE (getvariable('filters').users::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').users::VARCHAR[], f."user"::VARCHAR))
  AND (getvariable('filters').models::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').models::VARCHAR[], f.model_group::VARCHAR))
  AND (getvariable('filters').nodes::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').nodes::VARCHAR[], f.node::VARCHAR))
  AND (getvariable('filters').clients::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').clients::VARCHAR[], f.client::VARCHAR))
  AND (getvariable('filters').statuses::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').statuses::VARCHAR[], f.status::VARCHAR));

-- scoped: the selected requests that started in the filters' time range (most queries)
CREATE VIEW scoped AS
SELECT *
FROM selected f
WHERE f.start_time >= getvariable('filters').range_start::TIMESTAMPTZ
  AND f.start_time < getvariable('filters').range_end::TIMESTAMPTZ;

-- overlapping: the selected requests running at any moment of the range, also those that
-- started before it or end after it (what was in flight, for concurrency)
CREATE VIEW overlapping AS
SELECT *
FROM selected f
WHERE f.start_time < getvariable('filters').range_end::TIMESTAMPTZ
  AND f.end_time > getvariable('filters').range_start::TIMESTAMPTZ;

-- buckets: every 15-minute slot of the range with the display bucket (the hour or day in
-- the display time zone) it belongs to. Every UTC offset in use is a multiple of 15
-- minutes, so a slot never straddles two buckets, and converting a few thousand slots to
-- local time costs far less than converting every request. `bucket` is the local label;
-- `bucket_start` (the bucket's first instant) tells apart the two hours that share a
-- label when clocks go back. Queries LEFT JOIN requests to it on q15, which also gives
-- empty buckets their row.
CREATE VIEW buckets AS
WITH slots AS (
    SELECT
        q15,
        make_timestamptz(q15 * 900000000) AS slot_start,
        make_timestamptz(q15 * 900000000) AT TIME ZONE getvariable('filters').tz::VARCHAR AS local_time
    FROM range(
        epoch_us(getvariable('filters').range_start::TIMESTAMPTZ) // 900000000,
        (epoch_us(getvariable('filters').range_end::TIMESTAMPTZ) + 899999999) // 900000000
    ) AS s(q15)
),
labelled AS (
    SELECT
        q15,
        slot_start,
        date_trunc(getvariable('filters').bucket::VARCHAR, local_time) AS bucket,
        CASE WHEN getvariable('filters').bucket::VARCHAR = 'hour'
             THEN epoch_us(local_time) - epoch_us(slot_start) END AS utc_offset
    FROM slots
)
SELECT q15, bucket, min(slot_start) OVER (PARTITION BY bucket, utc_offset) AS bucket_start
FROM labelled;

-- keys_in_scope, users_in_scope: LiteLLM's keys and users this session may see (a
-- student: their own keys and their own user row)
CREATE VIEW keys_in_scope AS
SELECT *
FROM keys k
WHERE getvariable('filters').only_keys::VARCHAR[] IS NULL
   OR list_contains(getvariable('filters').only_keys::VARCHAR[], k.api_key_hash);

CREATE VIEW users_in_scope AS
SELECT *
FROM users u
WHERE getvariable('filters').only_keys::VARCHAR[] IS NULL
   OR u.user_id IN (SELECT user_id FROM keys_in_scope WHERE user_id IS NOT NULL);
