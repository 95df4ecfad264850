-- prompt_bands: requests by prompt length, in bands between the edges the cursor holds as
-- `prompt_edges` (prompt tokens, ascending; the runner sets them from the parameter
-- `edges`, default queries/serving.py PROMPT_BANDS; a request of exactly an edge falls
-- in the band above it: with 500, 2000: "0-500", "500-2k", "2k+"), per band, GPU node
-- and model (LiteLLM's model group): requests, time to first token and output speed
-- (streamed requests only; speed only where long enough to time) and latency (every
-- request), the percentiles of contract/measures.py. band_lo / band_hi: the band's edges
-- (hi exclusive; NULL: open). The $top_names busiest models (setup/views.sql top_models),
-- by name (shown_name).
WITH edged AS (
    SELECT
        q.*,
        (getvariable('prompt_edges')::BIGINT[])[q.band] AS band_lo,  -- lists count from 1
        (getvariable('prompt_edges')::BIGINT[])[q.band + 1] AS band_hi
    FROM serving_quantiles('bands', false, true, true, false, by_band := true) q
)
SELECT
    CASE
        WHEN band_lo IS NULL THEN '0-' || short_tokens(band_hi)
        WHEN band_hi IS NULL THEN short_tokens(band_lo) || '+'
        ELSE short_tokens(band_lo) || '-' || short_tokens(band_hi)
    END AS band,
    band_lo,
    band_hi,
    node::VARCHAR AS node,
    shown_name(model_group::VARCHAR) AS model,
    requests,
    ttft_p50_ms,
    ttft_p95_ms,
    latency_p50_ms,
    latency_p95_ms,
    output_tps_p50
FROM edged
WHERE model_group IS NULL OR model_group::VARCHAR IN (SELECT model FROM top_models($top_names))
ORDER BY band_lo NULLS FIRST, node, model
