-- client_adoption: per client, its active users (metric active_users: people with at least
-- one request) per local day, week (from Monday) and calendar month of the range, from
-- single requests: a person counts once per period, whichever days they came. A period the
-- range covers in part counts that part only (`whole` false). The $top_names clients by
-- active users over the range (shown_name); the rest in one row, client NULL.
WITH used AS (
    SELECT s.client, s."user", (s.start_time AT TIME ZONE getvariable('filters').tz::VARCHAR)::DATE AS day
    FROM scoped s
),
measures AS (SELECT r.client AS name, metric.active_users(r) AS measure FROM used r GROUP BY r.client),
kept AS (SELECT * FROM kept_names(measures, $top_names, NULL, NULL)),
named AS (
    SELECT u.*, CASE WHEN k.kept THEN u.client END AS kept_name
    FROM used u JOIN kept k ON k.name IS NOT DISTINCT FROM u.client
),
bounds AS (
    SELECT
        (getvariable('filters').range_start::TIMESTAMPTZ AT TIME ZONE getvariable('filters').tz::VARCHAR)::DATE
            AS first_day,
        ((getvariable('filters').range_end::TIMESTAMPTZ - INTERVAL 1 MICROSECOND)
            AT TIME ZONE getvariable('filters').tz::VARCHAR)::DATE AS last_day
),
periods AS (
    SELECT 'day' AS period, r.day AS period_start, r.day AS period_end, r.kept_name, r."user" FROM named r
    UNION ALL
    SELECT 'week', date_trunc('week', r.day)::DATE, (date_trunc('week', r.day) + INTERVAL 6 DAY)::DATE,
        r.kept_name, r."user"
    FROM named r
    UNION ALL
    SELECT 'month', date_trunc('month', r.day)::DATE,
        (date_trunc('month', r.day) + INTERVAL 1 MONTH - INTERVAL 1 DAY)::DATE, r.kept_name, r."user"
    FROM named r
)
SELECT
    r.period,
    r.period_start,
    r.period_start >= b.first_day AND r.period_end <= b.last_day AS whole,
    shown_name(r.kept_name::VARCHAR) AS client,
    metric.active_users(r) AS active_users
FROM periods r, bounds b
GROUP BY ALL
ORDER BY r.period, r.period_start, active_users DESC, client NULLS LAST
