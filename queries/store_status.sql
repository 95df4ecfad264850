-- store_status: how much the store holds and how fresh it is; ignores the filters (one row)
SELECT
    (SELECT count(*) FROM facts) AS requests,
    (SELECT count(DISTINCT "user") FROM facts) AS users,
    (SELECT min(start_time) FROM facts) AS first_request,
    (SELECT max(start_time) FROM facts) AS last_request,
    (SELECT max(finished_at) FROM etl_runs WHERE status = 'ok') AS last_ok_run,
    (SELECT max(finished_at) FROM etl_runs) AS last_run,
    (SELECT arg_max(status, finished_at) FROM etl_runs) AS last_run_status,
    (SELECT arg_max(error, finished_at) FROM etl_runs) AS last_run_error
