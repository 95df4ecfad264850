"""The Nodes page's views, as SQL text (SERVING_STATEMENTS): serving_perf, serving_speed,
serving_levels, serving_bands, serving_load, serving_level_time, serving_cache and
serving_routing each read the partials of the range's whole quarter hours and the
requests of its raw spans alike; the macro serving_quantiles takes the percentiles of
contract/measures.py from them. Created on every snapshot's connection
(queries/snapshot.py); the page's queries read them, and so does each partial's own SQL
(queries/serving.py)."""

from __future__ import annotations

from contract.measures import METRICS, ROUTING_PARTS

LEVEL_CAP = 64  # levels in flight above this are counted together

# Every per-request value a percentile of contract/measures.py is taken of
PERCENTILES = tuple(m for m in METRICS if m.of is not None)
MEASURES = tuple(sorted({m.of for m in PERCENTILES if m.of is not None}))
QUANTILES = tuple(sorted({m.q for m in PERCENTILES if m.q is not None}))
# The measures each kind of view counts per bin: those its pages read (a measure left
# out reads NULL from partials and requests alike). Per node and model every one
# (node_performance, model_performance, routing); per date, level and prompt band the
# times and speed (node_speed_by_bucket, load_table, latency_by_concurrency,
# prompt_bands): the prompt's size and LiteLLM's overhead would be a third more bins.
TIMES = ("duration_ms", "output_tps", "ttft_ms")
MEASURES_OF = {"perf": MEASURES, "speed": TIMES, "levels": TIMES, "bands": TIMES}
assert set(TIMES) <= set(MEASURES)


def _value(measure: str, row: str) -> str:
    return "0.0" if measure == "requests" else f"{row}.{measure}::DOUBLE"


def _measure_rows(kind: str) -> str:
    """One row per measure of each request, `requests` among them (one value, 0, per
    request, so that its count comes along): CROSS JOIN it, and take _value_of(row, kind)."""
    return "(VALUES " + ", ".join(f"('{m}')" for m in ("requests", *MEASURES_OF[kind])) + ") AS m(measure)"


def _value_of(row: str, kind: str) -> str:
    cases = " ".join(f"WHEN '{m}' THEN {_value(m, row)}" for m in ("requests", *MEASURES_OF[kind]))
    return f"CASE m.measure {cases} END"


def _q(q: float) -> str:
    return f"{round(q * 1000):03d}"


# What the Nodes page's percentiles are computed from, one row per value and how many
# requests had it: the partials of the range's whole quarter hours (a bin's value) and
# every request of its raw spans (its own value). One view per kind (binding one view of
# all three took 50 ms per query): by node and model, by display bucket and node, by node
# and how many requests it had in flight when the request started.
SERVING_VALUES = f"""
CREATE VIEW serving_perf AS
SELECT NULL::TIMESTAMPTZ AS bucket_start, p.node, p.model_group, NULL::INTEGER AS in_flight,
       NULL::INTEGER AS band, p.measure, hist_value(p.bin) AS value, p.n
FROM window_perf p
UNION ALL
SELECT NULL, r.node, r.model_group, NULL, NULL, m.measure, {_value_of("r", "perf")}, 1
FROM scoped r CROSS JOIN {_measure_rows("perf")}
WHERE in_raw_span(r.start_time);

CREATE VIEW serving_speed AS
SELECT d.bucket_start, p.node, NULL::VARCHAR AS model_group, NULL::INTEGER AS in_flight,
       NULL::INTEGER AS band, p.measure, hist_value(p.bin) AS value, p.n
FROM window_speed p
LEFT JOIN (SELECT bucket::DATE AS local_date, min(bucket_start) AS bucket_start FROM buckets GROUP BY 1) d
    ON d.local_date = p.local_date
UNION ALL
SELECT b.bucket_start, r.node, NULL, NULL, NULL, m.measure, {_value_of("r", "speed")}, 1
FROM scoped r JOIN buckets b ON b.q15 = r.q15 CROSS JOIN {_measure_rows("speed")}
WHERE in_raw_span(r.start_time);

CREATE VIEW serving_levels AS
SELECT NULL::TIMESTAMPTZ AS bucket_start, l.node, l.model_group, l.in_flight,
       NULL::INTEGER AS band, l.measure, hist_value(l.bin) AS value, l.n
FROM window_levels l
UNION ALL
SELECT NULL, r.node, r.model_group, r.in_flight, NULL, m.measure, {_value_of("r", "levels")}, 1
FROM started r CROSS JOIN {_measure_rows("levels")};

-- band: how many of the edges `prompt_edges` the prompt reaches (0: below the first;
-- a prompt of exactly an edge is in the band above it)
CREATE MACRO prompt_band(prompt_tokens) AS
    len(list_filter(getvariable('prompt_edges')::BIGINT[], lambda e: e <= prompt_tokens))::INTEGER;

CREATE VIEW serving_bands AS
SELECT NULL::TIMESTAMPTZ AS bucket_start, p.node, p.model_group, NULL::INTEGER AS in_flight,
       p.band, p.measure, hist_value(p.bin) AS value, p.n
FROM window_bands p
UNION ALL
SELECT NULL, r.node, r.model_group, NULL, prompt_band(r.prompt_tokens), m.measure,
       {_value_of("r", "bands")}, 1
FROM scoped r CROSS JOIN {_measure_rows("bands")}
WHERE in_raw_span(r.start_time);
"""

_ROUTED = ", ".join(f"{{row}}.{p.name}" for p in ROUTING_PARTS)

# The load table's sums (one row per request of the raw spans, as PARTS), the time each
# node spent at each level in flight, and the prompt cache's tokens per display bucket
SERVING_SUMS = f"""
CREATE VIEW serving_load AS
SELECT l.node, l.model_group, l.in_flight, l.status, l.n, l.n_streamed, l.duration_sum FROM window_load l
UNION ALL
SELECT r.node, r.model_group, r.in_flight, r.status, 1, r.n_streamed, r.duration_ms FROM started r;

CREATE VIEW serving_level_time AS
SELECT t.node, t.in_flight, t.us FROM window_level_time t
UNION ALL
SELECT s.node, least(s.in_flight, {LEVEL_CAP})::INTEGER, epoch_us(s.until) - epoch_us(s.moment)
FROM flight_segments s;

CREATE VIEW serving_cache AS
SELECT d.bucket_start, p.node, p.model_group, p.n, p.prompt_sum, p.cached_sum
FROM window_cache p
LEFT JOIN (SELECT bucket::DATE AS local_date, min(bucket_start) AS bucket_start FROM buckets GROUP BY 1) d
    ON d.local_date = p.local_date
UNION ALL
SELECT b.bucket_start, r.node, r.model_group, 1, r.prompt_tokens, r.cached_tokens
FROM scoped r JOIN buckets b ON b.q15 = r.q15
WHERE in_raw_span(r.start_time);

-- fell_back_from: the model group asked for, where a fallback served another
CREATE VIEW serving_routing AS
SELECT p.node, p.model_group, p.status, p.fell_back_from, p.n, {_ROUTED.format(row="p")}
FROM window_routing p
UNION ALL
SELECT r.node, r.model_group, r.status,
       CASE WHEN r.attempted_fallbacks > 0 AND r.original_model_group IS DISTINCT FROM r.model_group
           THEN r.original_model_group END,
       r.n, {_ROUTED.format(row="r")}
FROM scoped r
WHERE in_raw_span(r.start_time);
"""

# the requests of the raw spans with how many their node had in flight when they started
# (themselves included, capped at LEVEL_CAP: above it, levels count together)
STARTED = f"""
CREATE VIEW started AS
SELECT r.*, least(l.in_flight, {LEVEL_CAP})::INTEGER AS in_flight
FROM scoped r JOIN flight_segments l ON l.node = r.node AND l.moment = r.start_time
WHERE in_raw_span(r.start_time);
"""

_KEYS = ("bucket_start", "node", "model_group", "in_flight", "band")
_PLACED = ",\n        ".join(
    f"(any_value(total) - 1) * {q} AS at_{_q(q)},\n"
    f"        min(value) FILTER (WHERE upto > floor((total - 1) * {q})) AS below_{_q(q)},\n"
    f"        min(value) FILTER (WHERE upto > ceil((total - 1) * {q})) AS above_{_q(q)}"
    for q in QUANTILES
)
_INTERPOLATED = ",\n        ".join(
    f"below_{_q(q)} + (at_{_q(q)} - floor(at_{_q(q)})) * (above_{_q(q)} - below_{_q(q)}) AS q_{_q(q)}"
    for q in QUANTILES
)
_PIVOTED = ",\n    ".join(
    f"max(q_{_q(m.q)}) FILTER (WHERE measure = '{m.of}') AS {m.name}" for m in PERCENTILES if m.q is not None
)
SERVING_QUANTILES = f"""
-- serving_quantiles(kind, by_bucket, by_node, by_model, by_level, by_band := false): per
-- group of the view serving_<kind> (by display bucket, node, model, level in flight and
-- prompt band, as the flags say; a key not grouped by is NULL), the requests and every percentile of
-- contract/measures.py, each found among the values as quantile_cont finds it among
-- requests (the value at its position, interpolated between the two around it)
CREATE MACRO serving_quantiles(of_kind, by_bucket, by_node, by_model, by_level, by_band := false) AS TABLE
WITH counted AS (
    SELECT
        CASE WHEN by_bucket THEN bucket_start END AS bucket_start,
        CASE WHEN by_node THEN node::VARCHAR END AS node,
        CASE WHEN by_model THEN model_group::VARCHAR END AS model_group,
        CASE WHEN by_level THEN in_flight END AS in_flight,
        CASE WHEN by_band THEN band END AS band,
        measure,
        value,
        sum(n) AS n
    FROM query_table('serving_' || of_kind)
    WHERE value IS NOT NULL
    GROUP BY ALL
),
ranked AS (
    SELECT
        *,
        sum(n) OVER (by_group ORDER BY value ROWS UNBOUNDED PRECEDING) AS upto,
        sum(n) OVER by_group AS total
    FROM counted
    WINDOW by_group AS (PARTITION BY {", ".join(_KEYS)}, measure)
),
placed AS (
    SELECT
        {", ".join(_KEYS)},
        measure,
        any_value(total) AS total,
        {_PLACED}
    FROM ranked
    GROUP BY ALL
),
quantiles AS (
    SELECT
        {", ".join(_KEYS)},
        measure,
        total,
        {_INTERPOLATED}
    FROM placed
)
SELECT
    {", ".join(_KEYS)},
    (max(total) FILTER (WHERE measure = 'requests'))::BIGINT AS requests,
    {_PIVOTED}
FROM quantiles
GROUP BY ALL
"""

SERVING_STATEMENTS = (STARTED, SERVING_VALUES, SERVING_SUMS, SERVING_QUANTILES)
