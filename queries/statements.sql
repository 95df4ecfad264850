-- statements: every closed month (newest first) with its statement's totals as this session
-- may see them (a student: their own lines' sums), its late requests of earlier months
-- listed as adjustments apart, and when it was closed
SELECT
    m.month,
    m.zone,
    m.closed_at,
    m.range_start,
    m.range_end,
    coalesce(sum(l.requests) FILTER (WHERE l.kind = 'usage'), 0)::BIGINT AS requests,
    coalesce(sum(l.spend_usd) FILTER (WHERE l.kind = 'usage'), 0)::DOUBLE AS spend_usd,
    sum(l.api_cost_usd) FILTER (WHERE l.kind = 'usage') AS api_cost_usd,
    coalesce(sum(l.prompt_cached_tokens + l.prompt_uncached_tokens + l.completion_tokens)
        FILTER (WHERE l.kind = 'usage'), 0)::BIGINT AS total_tokens,
    count(DISTINCT l."user") FILTER (WHERE l.kind = 'usage') AS users,
    coalesce(sum(l.requests) FILTER (WHERE l.kind = 'adjustment'), 0)::BIGINT AS adjustment_requests,
    coalesce(sum(l.spend_usd) FILTER (WHERE l.kind = 'adjustment'), 0)::DOUBLE AS adjustment_spend_usd
FROM statement_months m
LEFT JOIN closed_lines_in_scope l ON l.month = m.month
GROUP BY ALL
ORDER BY m.month DESC
