-- by_user: usage per person (or ownerless key), with each one's share of the total. The
-- $top_names by spend, then tokens, and the highlighted user ($highlight), by name
-- (shown_name); the rest in one row, user NULL, `folded` of them (setup/views.sql, kept_names)
WITH measures AS (
    SELECT r."user" AS name, [metric.spend_usd(r), metric.total_tokens(r)] AS measure
    FROM scoped_sums r
    GROUP BY r."user"
),
kept AS (SELECT * FROM kept_names(measures, $top_names, $highlight::VARCHAR, $shown::VARCHAR[]))
SELECT
    shown_name(r.kept_name::VARCHAR) AS "user",
    CASE WHEN NOT r.kept THEN count(DISTINCT r."user") END AS folded,
    metric.requests(r) AS requests,
    metric.failures(r) AS failures,
    metric.total_tokens(r) AS total_tokens,
    metric.spend_usd(r) AS spend_usd,
    metric.cache_hit_rate(r) AS cache_hit_rate,
    metric.share(metric.requests(r)) AS requests_share,
    metric.share(metric.total_tokens(r)) AS tokens_share,
    metric.share(metric.spend_usd(r)) AS spend_share
FROM (
    SELECT s.*, k.kept, CASE WHEN k.kept THEN s."user" END AS kept_name
    FROM scoped_sums s JOIN kept k ON k.name IS NOT DISTINCT FROM s."user"
) r
GROUP BY r.kept, r.kept_name
ORDER BY folded NULLS FIRST, spend_usd DESC, total_tokens DESC, "user"
