-- peers: per-person totals for a student's comparison bars. Names leave this query only
-- when $named; otherwise the student is "You" and everyone else a letter by rank
-- ("Student A" spent most), so no other name reaches a student's browser
-- The student's own requests form "You" by their keys, whatever their label says, and
-- never share a group with anyone else's: a label is partly client-supplied (LiteLLM's
-- `user` field), and a request labelled with a classmate's name must not merge the two.
WITH marked AS (
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
    GROUP BY 1, 2
),
ranked AS (
    SELECT
        *,
        row_number() OVER (PARTITION BY is_you ORDER BY spend_usd DESC, total_tokens DESC, name) - 1 AS place
    FROM per_user
)
SELECT
    CASE
        WHEN is_you THEN 'You'
        WHEN $named THEN name
        WHEN place < 26 THEN 'Student ' || chr(65 + place::INTEGER)
        ELSE 'Student ' || chr(64 + (place // 26)::INTEGER) || chr(65 + (place % 26)::INTEGER)
    END AS "user",
    is_you,
    requests,
    total_tokens,
    spend_usd,
    requests_share,
    tokens_share,
    spend_share
FROM ranked
ORDER BY spend_usd DESC, total_tokens DESC, "user"
