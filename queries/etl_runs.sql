-- etl_runs: the ETL's most recent runs, newest first: outcome, rows, noise dropped by
-- reason, the error of a failed run ($limit rows)
SELECT
    run_id,
    started_at,
    finished_at,
    status,
    mode,
    date_diff('millisecond', started_at, finished_at) / 1000.0 AS seconds,
    rows_read,
    rows_written,
    duplicates_skipped,
    dropped_master_key,
    dropped_health_check,
    dropped_by_rule,
    rows_malformed,
    kept_noise_tagged,
    error
FROM etl_runs
ORDER BY finished_at DESC, run_id DESC
LIMIT $limit
