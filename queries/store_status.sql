-- store_status: what the store holds for this session and how fresh it is (one row);
-- ignores the time range and dimension filters, not a student's scope; the last run's
-- error (it can name the database, its user and host) only for a session of everything
SELECT
    (SELECT metric.requests(r) FROM in_scope_sums r) AS requests,
    (SELECT metric.active_users(r) FROM in_scope_sums r) AS users,
    (SELECT min(first_start) FROM in_scope_sums) AS first_request,
    (SELECT max(last_start) FROM in_scope_sums) AS last_request,
    (SELECT max(finished_at) FROM etl_runs WHERE status = 'ok') AS last_ok_run,
    (SELECT max(finished_at) FROM etl_runs) AS last_run,
    (SELECT arg_max(status, finished_at) FROM etl_runs) AS last_run_status,
    CASE WHEN getvariable('filters').only_keys IS NULL
        THEN (SELECT arg_max(error, finished_at) FROM etl_runs) END AS last_run_error
