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
-- compares). A refusal is a row with a `rate_limit` (docs/store.md): a 429 from one of
-- LiteLLM's own rate limits, by kind (tpm, rpm, parallel; unknown when the row does not
-- say); `rate_limited_elsewhere` counts those by a limit that is not the key's own (its
-- owner's, its team's, ...); a refusal stored before the store kept `rate_limit` counts,
-- of a kind unknown. The limiter's window is 60 s from the first request after the last
-- window ended, not a clock minute, so a key can be refused in a minute whose share stays
-- below 1.
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
        count(f.rate_limit) AS refused,
        count(*) FILTER (WHERE f.rate_limit = 'tpm') AS refused_tpm,
        count(*) FILTER (WHERE f.rate_limit = 'rpm') AS refused_rpm,
        count(*) FILTER (WHERE f.rate_limit = 'parallel') AS refused_parallel,
        count(*) FILTER (WHERE f.rate_limit_scope NOT IN ('api_key', 'model_per_key')) AS refused_elsewhere,
        max(f.start_time) FILTER (WHERE f.rate_limit IS NOT NULL) AS last_refused
    FROM (
        SELECT
            s.* REPLACE (
                -- a refusal stored before these columns (its file lacks them): kind unknown
                CASE WHEN s.rate_limit IS NULL AND s.error_code IS NULL AND s.error_class = 'ProxyRateLimitError'
                     THEN 'unknown' ELSE s.rate_limit END AS rate_limit
            )
        FROM scoped s
        WHERE s.api_key_hash IN (SELECT api_key_hash FROM limited)
    ) f
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
        sum(refused_tpm)::BIGINT AS rate_limited_tpm,
        sum(refused_rpm)::BIGINT AS rate_limited_rpm,
        sum(refused_parallel)::BIGINT AS rate_limited_parallel,
        sum(refused_elsewhere)::BIGINT AS rate_limited_elsewhere,
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
        coalesce(p.rate_limited_tpm, 0) AS rate_limited_tpm,
        coalesce(p.rate_limited_rpm, 0) AS rate_limited_rpm,
        coalesce(p.rate_limited_parallel, 0) AS rate_limited_parallel,
        coalesce(p.rate_limited_elsewhere, 0) AS rate_limited_elsewhere,
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
    rate_limited_tpm,
    rate_limited_rpm,
    rate_limited_parallel,
    rate_limited_elsewhere,
    last_rate_limited_at
FROM measured
ORDER BY
    greatest(tpm_share, rpm_share) DESC NULLS LAST,
    rate_limited DESC,
    key_alias,
    api_key_hash
