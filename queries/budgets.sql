-- budgets: every key in scope with its spend against its budget, its limits, its last
-- request, and the forecast at its present pace (setup/views.sql: burn_per_day,
-- budget_forecast; budget_problem names a setting that cannot be read) for the key and for its person's own budget; the keys that run out
-- soonest first (those used up before all), then those closest to their budget. The
-- filters' range is the week before the key list was copied (queries/pages.py, budgets):
-- its end is the copy.
WITH activity AS (
    SELECT r.api_key_hash::VARCHAR AS api_key_hash, max(r.last_start) AS last_request
    FROM in_scope_sums r
    GROUP BY 1
),
key_week AS (  -- each key's and each person's spend in the week
    SELECT r.api_key_hash::VARCHAR AS api_key_hash, sum(r.spend_sum) AS week_spend
    FROM scoped_sums r
    GROUP BY 1
),
user_week AS (
    SELECT r.user_id::VARCHAR AS user_id, sum(r.spend_sum) AS week_spend
    FROM scoped_sums r
    GROUP BY 1
),
paced AS (
    SELECT
        k.*,
        u.user_alias,
        u.max_budget AS user_max_budget,
        u.spend AS user_spend,
        u.budget_reset_at AS user_budget_reset_at,
        u.budget_duration AS user_budget_duration,
        a.last_request,
        getvariable('filters').range_end::TIMESTAMPTZ AS copied_at,
        burn_per_day(k.spend, k.budget_reset_at, k.budget_duration, kw.week_spend) AS burn_per_day,
        burn_per_day(u.spend, u.budget_reset_at, u.budget_duration, uw.week_spend) AS user_burn_per_day
    FROM keys_in_scope k
    LEFT JOIN activity a ON a.api_key_hash = k.api_key_hash
    LEFT JOIN key_week kw ON kw.api_key_hash = k.api_key_hash
    LEFT JOIN users_in_scope u ON u.user_id = k.user_id
    LEFT JOIN user_week uw ON uw.user_id = k.user_id
)
SELECT
    api_key_hash,
    key_alias,
    key_name,
    user_id,
    user_alias,
    spend,
    max_budget,
    spend / NULLIF(usable_budget(max_budget, budget_duration, spend), 0) AS budget_used,
    -- greatest() skips a NULL: the budget's own NULL must stay one
    CASE WHEN usable_budget(max_budget, budget_duration, spend) IS NOT NULL
         THEN greatest(max_budget - coalesce(spend, 0), 0) END AS budget_left,
    budget_problem(max_budget, budget_duration, spend) AS budget_problem,
    budget_setting(max_budget, budget_duration, spend) AS budget_setting,
    budget_duration,
    budget_reset_at,
    -- when the period LiteLLM counts `spend` over began (NULL: no period, or none read)
    budget_reset_at - budget_period(budget_duration) AS budget_period_start,
    burn_per_day,
    budget_runs_out_at(copied_at, spend, max_budget, burn_per_day) AS runs_out_at,
    budget_forecast(copied_at, spend, max_budget, budget_reset_at, burn_per_day) AS forecast,
    tpm_limit,
    rpm_limit,
    blocked,
    expires,
    greatest(last_request, last_active) AS last_active,
    user_max_budget,
    user_spend,
    user_spend / NULLIF(usable_budget(user_max_budget, user_budget_duration, user_spend), 0) AS user_budget_used,
    budget_problem(user_max_budget, user_budget_duration, user_spend) AS user_budget_problem,
    budget_setting(user_max_budget, user_budget_duration, user_spend) AS user_budget_setting,
    user_budget_reset_at,
    user_burn_per_day,
    budget_runs_out_at(copied_at, user_spend, user_max_budget, user_burn_per_day) AS user_runs_out_at,
    budget_forecast(copied_at, user_spend, user_max_budget, user_budget_reset_at, user_burn_per_day)
        AS user_forecast,
    snapshot_at
FROM paced
ORDER BY
    -- a budget used up has run out already: before any that will
    CASE forecast WHEN 'spent' THEN copied_at WHEN 'runs_out' THEN runs_out_at END NULLS LAST,
    budget_used DESC NULLS LAST,
    spend DESC,
    key_alias
