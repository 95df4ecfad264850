-- statement_lines: a range's statement lines (setup/views.sql `statement_lines`): a month's
-- as ops/statements.py closes it, and an open month's draft on the Statements page
SELECT *
FROM statement_lines('scoped_sums')
ORDER BY spend_usd DESC, requests DESC, "user" NULLS LAST, key_alias NULLS LAST, api_key_hash, client NULLS LAST
