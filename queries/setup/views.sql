-- The two views every query reads. The runner sets the session variable `filters` (a
-- struct, see queries/filters.py) on each query's own cursor, so the filters are applied
-- in SQL, always, and a query cannot forget one.

-- scoped: the requests in the filters' range and dimensions
CREATE VIEW scoped AS
SELECT *
FROM facts f
WHERE f.start_time >= getvariable('filters').range_start::TIMESTAMPTZ
  AND f.start_time < getvariable('filters').range_end::TIMESTAMPTZ
  AND (getvariable('filters').users::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').users::VARCHAR[], f."user"::VARCHAR))
  AND (getvariable('filters').models::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').models::VARCHAR[], f.model_group::VARCHAR))
  AND (getvariable('filters').nodes::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').nodes::VARCHAR[], f.node::VARCHAR))
  AND (getvariable('filters').clients::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').clients::VARCHAR[], f.client::VARCHAR))
  AND (getvariable('filters').statuses::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').statuses::VARCHAR[], f.status::VARCHAR))
  AND (getvariable('filters').only_keys::VARCHAR[] IS NULL
       OR list_contains(getvariable('filters').only_keys::VARCHAR[], f.api_key_hash::VARCHAR));

-- buckets: every 15-minute slot of the range, with the display bucket (the hour or day
-- in the display time zone) it belongs to. Every UTC offset in use is a multiple of 15
-- minutes, so a slot never straddles two buckets, and converting a few thousand slots
-- to local time costs far less than converting every request. Queries LEFT JOIN the
-- requests to it on q15, which also gives empty buckets their row.
CREATE VIEW buckets AS
SELECT
    q15,
    date_trunc(
        getvariable('filters').bucket::VARCHAR,
        make_timestamptz(q15 * 900000000) AT TIME ZONE getvariable('filters').tz::VARCHAR
    ) AS bucket
FROM range(
    epoch_ms(getvariable('filters').range_start::TIMESTAMPTZ) // 900000,
    (epoch_ms(getvariable('filters').range_end::TIMESTAMPTZ) + 899999) // 900000
) AS slots(q15);
