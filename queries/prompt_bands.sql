-- prompt_bands: requests by prompt length, in bands between the edges $edges (prompt
-- tokens, ascending; a request of exactly an edge falls in the band above it: with 500,
-- 2000: "<500", "500-2k", ">=2k"), per band, GPU node and model (LiteLLM's model
-- group): requests, streamed requests, time to first token and output speed (streamed
-- requests only; speed only where long enough to time), latency (every request), by the
-- metrics of queries/metrics.py. band_lo / band_hi: the band's edges (hi exclusive; NULL
-- open). Read from the range's requests (the band edges are a parameter).
WITH banded AS (
    SELECT
        r.*,
        len(list_filter($edges::BIGINT[], lambda e: e <= r.prompt_tokens)) AS band_index
    FROM scoped r
),
grouped AS (
    SELECT
        r.band_index,
        r.node::VARCHAR AS node,
        r.model_group::VARCHAR AS model,
        metric.requests(r) AS requests,
        metric.streamed_requests(r) AS streamed_requests,
        metric.ttft_p50_ms(r) AS ttft_p50_ms,
        metric.ttft_p95_ms(r) AS ttft_p95_ms,
        metric.latency_p50_ms(r) AS latency_p50_ms,
        metric.latency_p95_ms(r) AS latency_p95_ms,
        metric.output_tps_p50(r) AS output_tps_p50
    FROM banded r
    GROUP BY ALL
),
edged AS (
    SELECT
        *,
        ($edges::BIGINT[])[band_index] AS band_lo,  -- lists count from 1: the edge below
        ($edges::BIGINT[])[band_index + 1] AS band_hi
    FROM grouped
)
SELECT
    CASE
        WHEN band_lo IS NULL THEN '<' || short_tokens(band_hi)
        WHEN band_hi IS NULL THEN '>=' || short_tokens(band_lo)
        ELSE short_tokens(band_lo) || '-' || short_tokens(band_hi)
    END AS band,
    band_lo,
    band_hi,
    node,
    model,
    requests,
    streamed_requests,
    ttft_p50_ms,
    ttft_p95_ms,
    latency_p50_ms,
    latency_p95_ms,
    output_tps_p50
FROM edged
ORDER BY band_lo NULLS FIRST, node, model
