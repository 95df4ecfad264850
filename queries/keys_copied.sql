-- keys_copied: when the ETL last copied LiteLLM's key list (NULL: never); a budget's
-- forecast is made as of then (queries/pages.py, budgets)
SELECT max(snapshot_at) AS copied_at FROM keys_in_scope
