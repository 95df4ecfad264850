-- refusals_by_key: the keys LiteLLM refused requests of in the range, and how many: for
-- their budget (error class BudgetExceededError: the key's, its user's or its team's
-- budget was spent; LiteLLM writes them with error code 422 or 400 and no node) and for a
-- rate limit (a row with `rate_limit`, docs/store.md; also a refusal stored before that
-- column, an unknown kind, as key_limits.sql counts it), each key named as LiteLLM's key
-- list names it now (else as its rows did). The most refused first. Single
-- requests: the rollups keep no error class, so this reads the range's error columns.
WITH refused AS (
    SELECT
        f.api_key_hash::VARCHAR AS api_key_hash,
        f.key_alias::VARCHAR AS key_alias,
        f."user"::VARCHAR AS "user",
        f.error_class = 'BudgetExceededError' AS for_budget,
        f.rate_limit IS NOT NULL
            OR (f.error_code IS NULL AND f.error_class = 'ProxyRateLimitError') AS for_rate
    FROM scoped f
    WHERE f.status = 'failure'
)
SELECT
    r.api_key_hash,
    coalesce(any_value(k.key_alias), any_value(r.key_alias)) AS key_alias,
    any_value(r."user") AS "user",
    count(*) FILTER (WHERE r.for_budget)::BIGINT AS budget_refused,
    count(*) FILTER (WHERE r.for_rate AND NOT coalesce(r.for_budget, false))::BIGINT AS rate_limited
FROM refused r
LEFT JOIN keys_in_scope k ON k.api_key_hash::VARCHAR = r.api_key_hash
WHERE r.for_budget OR r.for_rate
GROUP BY r.api_key_hash
ORDER BY budget_refused + rate_limited DESC, key_alias, api_key_hash
