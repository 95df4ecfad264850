-- peers: per-person totals for a student's comparison bars, among students only: staff
-- (LiteLLM's proxy_admin users, the professor) are left out. The student's own requests
-- form "You" by their keys, whatever their label says, and never share a group with
-- anyone else's: a label is partly client-supplied (LiteLLM's `user` field), and a request
-- labelled with a classmate's name must not merge the two.
-- Unless $named, no other person's name or amount leaves this query: everyone else is a
-- letter ranked by the measure $by shows ("Student A" used most, so the bars read A, B,
-- C from the top), with their share of the students' total rounded to a whole percent;
-- with 13 people, an exact amount and a rank could tell who it is. "You" keep your own
-- exact figures. The $top_names first of the others are shown, the rest in one row (user
-- NULL, `folded` of them); a name (when $named) is cut as setup/views.sql shown_name does.
WITH staff AS (
    SELECT user_id FROM users_in_scope WHERE user_role IN ('proxy_admin', 'proxy_admin_viewer')
),
marked AS (
    SELECT r.*, list_contains($own_keys::VARCHAR[], r.api_key_hash::VARCHAR) AS own
    FROM scoped_sums r
),
per_user AS (
    SELECT
        CASE WHEN r.own THEN NULL ELSE r."user"::VARCHAR END AS name,
        r.own AS is_you,
        metric.requests(r) AS requests,
        metric.total_tokens(r) AS total_tokens,
        metric.spend_usd(r) AS spend_usd,
        metric.share(metric.requests(r)) AS requests_share,
        metric.share(metric.total_tokens(r)) AS tokens_share,
        metric.share(metric.spend_usd(r)) AS spend_share
    FROM marked r
    WHERE r.own OR r.user_id IS NULL OR r.user_id::VARCHAR NOT IN (SELECT user_id FROM staff)
    GROUP BY 1, 2
),
ranked AS (
    SELECT
        *,
        row_number() OVER (
            PARTITION BY is_you
            ORDER BY CASE $by WHEN 'spend' THEN spend_usd WHEN 'tokens' THEN total_tokens ELSE requests END DESC,
                requests DESC, name
        ) - 1 AS place
    FROM per_user
)
SELECT * EXCLUDE (place)
FROM (
    SELECT
        CASE
            WHEN is_you THEN 'You'
            WHEN $named THEN shown_name(name)
            WHEN place < 26 THEN 'Student ' || chr(65 + place::INTEGER)
            ELSE 'Student ' || chr(64 + (place // 26)::INTEGER) || chr(65 + (place % 26)::INTEGER)
        END AS "user",
        is_you,
        CASE WHEN is_you OR $named THEN requests END AS requests,
        CASE WHEN is_you OR $named THEN total_tokens END AS total_tokens,
        CASE WHEN is_you OR $named THEN spend_usd END AS spend_usd,
        CASE WHEN is_you OR $named THEN requests_share ELSE round(requests_share, 2) END AS requests_share,
        CASE WHEN is_you OR $named THEN tokens_share ELSE round(tokens_share, 2) END AS tokens_share,
        CASE WHEN is_you OR $named THEN spend_share ELSE round(spend_share, 2) END AS spend_share,
        NULL::BIGINT AS folded,
        place
    FROM ranked
    WHERE is_you OR place < $top_names
    UNION ALL
    SELECT
        NULL,
        false,
        CASE WHEN $named THEN sum(requests) END,
        CASE WHEN $named THEN sum(total_tokens) END,
        CASE WHEN $named THEN sum(spend_usd) END,
        CASE WHEN $named THEN sum(requests_share) ELSE round(sum(requests_share), 2) END,
        CASE WHEN $named THEN sum(tokens_share) ELSE round(sum(tokens_share), 2) END,
        CASE WHEN $named THEN sum(spend_share) ELSE round(sum(spend_share), 2) END,
        count(*),
        NULL
    FROM ranked
    WHERE NOT is_you AND place >= $top_names
    HAVING count(*) > 0
)
ORDER BY is_you DESC, folded NULLS FIRST, place
