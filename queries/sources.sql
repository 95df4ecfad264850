-- sources: per LiteLLM database the store is copied from, how far it has been copied
-- (the ETL's bookmark) and the newest request the store holds; one row with an empty
-- source when no database has been read yet (a demo, or rows ingested from Python)
SELECT
    b.source,
    b.cursor_column,
    b.cursor,
    b.start_max,
    b.full_refresh_pending,
    (SELECT max(last_start) FROM in_scope_sums) AS newest_request,
    (SELECT max(last_ingested) FROM in_scope_sums) AS newest_ingested
FROM (SELECT 1) AS one
LEFT JOIN bookmark b ON true
ORDER BY b.source
