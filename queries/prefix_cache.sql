-- prefix_cache: the server's prefix cache per GPU node and model (LiteLLM's model group):
-- requests, prompt and cached tokens, and the hit rate (cached over prompt tokens).
-- cache_reported: the pair reported cached tokens at least once in the range. A pair whose
-- cached tokens are all 0 is "not reported": a server that caches nothing cannot be told
-- apart from one that does not report it, so its hit rate is NULL, not 0.
-- repeated_prompts: the pair received repeated prompts, as far as the store can tell
-- (it holds no prompt text): one key (api_key_hash) sent it at least 10 requests in the
-- range, averaging at least 1,000 prompt tokens: an agent or a chat resending its
-- conversation, or one long system prompt, shares a prefix many cache blocks long
-- whatever the server's block size, so a working prefix cache reports hits on them.
-- uncached_repeats: repeated prompts, yet no cached token reported (worth a look: prefix
-- caching off, or not reported by the server).
-- The $top_names busiest models (setup/views.sql top_models), by name (shown_name).
WITH per_key AS (
    SELECT
        r.node::VARCHAR AS node,
        r.model_group::VARCHAR AS model,
        metric.requests(r) AS requests,
        metric.prompt_tokens(r) AS prompt_tokens
    FROM scoped_sums r
    GROUP BY r.node, r.model_group, r.api_key_hash
),
pairs AS (
    SELECT
        r.node::VARCHAR AS node,
        r.model_group::VARCHAR AS model,
        metric.requests(r) AS requests,
        metric.prompt_tokens(r) AS prompt_tokens,
        metric.cached_tokens(r) AS cached_tokens,
        metric.cache_hit_rate(r) AS cache_hit_rate
    FROM scoped_sums r
    GROUP BY ALL
)
SELECT
    p.node,
    shown_name(p.model) AS model,
    p.requests,
    p.prompt_tokens,
    p.cached_tokens,
    CASE WHEN p.cached_tokens > 0 THEN p.cache_hit_rate END AS cache_hit_rate,
    p.cached_tokens > 0 AS cache_reported,
    coalesce(k.repeated, false) AS repeated_prompts,
    p.cached_tokens = 0 AND coalesce(k.repeated, false) AS uncached_repeats
FROM pairs p
LEFT JOIN (
    SELECT node, model, bool_or(requests >= 10 AND prompt_tokens >= 1000 * requests) AS repeated
    FROM per_key
    GROUP BY ALL
) k ON k.node IS NOT DISTINCT FROM p.node AND k.model IS NOT DISTINCT FROM p.model
WHERE p.model IS NULL OR p.model IN (SELECT model FROM top_models($top_names))
ORDER BY p.requests DESC, p.node, p.model
