-- statement: the lines of the closed month $month (YYYY-MM) this session may see, as they
-- were closed: the month's own (kind 'usage'), then the late requests of earlier months
-- (kind 'adjustment', of_month saying which)
SELECT * EXCLUDE (month)
FROM closed_lines_in_scope
WHERE month = $month
ORDER BY kind DESC, of_month, spend_usd DESC, requests DESC, "user" NULLS LAST, key_alias NULLS LAST,
    api_key_hash, client NULLS LAST
