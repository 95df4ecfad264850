-- budgets: every key in scope with its spend against its budget, its limits and its last
-- request; keys closest to (or over) their budget first
WITH activity AS (
    SELECT r.api_key_hash::VARCHAR AS api_key_hash, max(r.last_start) AS last_request
    FROM in_scope_sums r
    GROUP BY 1
)
SELECT
    k.api_key_hash,
    k.key_alias,
    k.key_name,
    k.user_id,
    u.user_alias,
    k.spend,
    k.max_budget,
    k.spend / NULLIF(k.max_budget, 0) AS budget_used,
    greatest(k.max_budget - k.spend, 0) AS budget_left,
    k.budget_duration,
    k.budget_reset_at,
    k.tpm_limit,
    k.rpm_limit,
    k.blocked,
    k.expires,
    greatest(a.last_request, k.last_active) AS last_active,
    u.max_budget AS user_max_budget,
    u.spend AS user_spend
FROM keys_in_scope k
LEFT JOIN activity a ON a.api_key_hash = k.api_key_hash
LEFT JOIN users_in_scope u ON u.user_id = k.user_id
ORDER BY budget_used DESC NULLS LAST, k.spend DESC, k.key_alias
