-- etl_health: the ETL at a glance (one row): its last success and failure, and what
-- the runs of the last 24 hours before $now did
WITH recent AS (
    SELECT * FROM etl_runs WHERE finished_at > $now::TIMESTAMPTZ - INTERVAL 24 HOUR
)
SELECT
    (SELECT max(finished_at) FROM etl_runs WHERE status = 'ok') AS last_ok_run,
    (SELECT max(finished_at) FROM etl_runs WHERE status = 'failed') AS last_failed_run,
    (SELECT count(*) FROM recent) AS runs_24h,
    (SELECT count(*) FROM recent WHERE status = 'failed') AS failed_24h,
    (SELECT coalesce(sum(rows_written), 0) FROM recent) AS rows_written_24h,
    (SELECT coalesce(sum(dropped_master_key), 0) FROM recent) AS dropped_master_key_24h,
    (SELECT coalesce(sum(dropped_health_check), 0) FROM recent) AS dropped_health_check_24h,
    (SELECT coalesce(sum(dropped_by_rule), 0) FROM recent) AS dropped_by_rule_24h,
    (SELECT coalesce(sum(kept_noise_tagged), 0) FROM recent) AS kept_noise_tagged_24h,
    (SELECT quantile_cont(date_diff('millisecond', started_at, finished_at) / 1000.0, 0.5)
     FROM recent WHERE status = 'ok') AS median_seconds_24h
