-- key_limits: every key in scope with a tpm or rpm limit against it: the most tokens and
-- the most requests it had in one clock minute (UTC) of the range, and that minute; the
-- share of its limit that is; and how many of its requests LiteLLM refused for a rate
-- limit. The keys nearest to (or over) a limit first. The range is the week before the key
-- list was copied (queries/pages.py, limits).
--
-- Counted as LiteLLM's limiter counts them (parallel_request_limiter_v3, the proxy's
-- default): a minute's tokens are those of its successful requests less their cached
-- prompt tokens (token_rate_limit_type "total"; a failure's tokens are refunded); its
-- requests are all of them, refused ones too (the limiter counts a request before it
-- compares). A refusal is a row of error class ProxyRateLimitError: a 429 from one of
-- LiteLLM's own limiters (1.106 on). The limiter's window is 60 s from the first request
-- after the last window ended, not a clock minute, so a key can be refused in a minute
-- whose share stays below 1.
WITH limited AS (
    SELECT k.api_key_hash::VARCHAR AS api_key_hash, k.key_alias, k.key_name, k.user_id, k.tpm_limit, k.rpm_limit
    FROM keys_in_scope k
    WHERE k.tpm_limit IS NOT NULL OR k.rpm_limit IS NOT NULL
),
minutes AS (  -- each key's requests per clock minute (epoch minutes: the same in any zone)
    SELECT
        f.api_key_hash::VARCHAR AS api_key_hash,
        epoch_us(f.start_time) // 60000000 AS minute,
        sum(CASE WHEN f.status = 'success' THEN greatest(f.total_tokens - f.cached_tokens, 0) ELSE 0 END)
            AS tokens,
        count(*) AS requests,
        count(*) FILTER (WHERE f.error_class = 'ProxyRateLimitError') AS refused,
        max(f.start_time) FILTER (WHERE f.error_class = 'ProxyRateLimitError') AS last_refused
    FROM scoped f
    WHERE f.api_key_hash IN (SELECT api_key_hash FROM limited)
    GROUP BY ALL
),
peaks AS (  -- ties: the earliest minute
    SELECT
        api_key_hash,
        max(tokens)::BIGINT AS peak_tpm,
        first(minute ORDER BY tokens DESC, minute) FILTER (WHERE tokens > 0) AS peak_tpm_minute,
        max(requests)::BIGINT AS peak_rpm,
        first(minute ORDER BY requests DESC, minute) AS peak_rpm_minute,
        sum(refused)::BIGINT AS rate_limited,
        max(last_refused) AS last_rate_limited_at
    FROM minutes
    GROUP BY api_key_hash
),
measured AS (
    SELECT
        l.*,
        coalesce(p.peak_tpm, 0) AS peak_tpm,
        make_timestamptz(p.peak_tpm_minute * 60000000) AS peak_tpm_at,
        coalesce(p.peak_rpm, 0) AS peak_rpm,
        make_timestamptz(p.peak_rpm_minute * 60000000) AS peak_rpm_at,
        coalesce(p.rate_limited, 0) AS rate_limited,
        p.last_rate_limited_at
    FROM limited l
    LEFT JOIN peaks p ON p.api_key_hash = l.api_key_hash
)
SELECT
    api_key_hash,
    key_alias,
    key_name,
    user_id,
    tpm_limit,
    peak_tpm,
    peak_tpm_at,
    peak_tpm / NULLIF(tpm_limit, 0) AS tpm_share,
    rpm_limit,
    peak_rpm,
    peak_rpm_at,
    peak_rpm / NULLIF(rpm_limit, 0) AS rpm_share,
    rate_limited,
    last_rate_limited_at
FROM measured
ORDER BY
    greatest(tpm_share, rpm_share) DESC NULLS LAST,
    rate_limited DESC,
    key_alias,
    api_key_hash
