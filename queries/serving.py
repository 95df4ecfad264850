"""The Nodes page's figures per span of time, computed once and merged: what lets that
page cost what its window asks for.

Its figures need single requests: percentiles of latency, time to first token, output
speed and prompt size, and how many requests each node had in flight at every moment.
Read from the requests, a month of a busy lab is millions of rows and a walk through
every start and end. But each UTC day's share of them (or a span of quarter hours of
it) can be computed once and kept, as partials:

- `flight`: per 15-minute slot and node, the peak of requests in flight and the
  request-microseconds spent (levels are read with the requests of the day before,
  still running at midnight; a request counts in flight for at most a day after the
  day it started, as everywhere on the page);
- `perf`: per node and model, how many requests had each value of each percentile
  measure of contract/measures.py, in its logarithmic bins (within HIST_ACCURACY);
- `speed`: the same per local date (in the page's time zone) and node (this one, `levels`
  and `bands` only of the measures their pages read, MEASURES_OF: the times and speed);
- `levels`: the same per node, model and level in flight at the request's start (capped
  at 64);
- `load`: per node, model, level at the start and status, the requests, the streamed
  ones and the sum of their latency (the PARTS of contract/measures.py, so that its
  measures read them);
- `level_time`: per node and level in flight (capped alike), the microseconds spent at it;
- `cache`: per local date, node and model, the requests, prompt and cached tokens;
- `bands`: like `perf`, per node, model and prompt band (the band edges are set on the
  cursor as the variable `prompt_edges`, and are part of the partials' cache key);
- `failures`: failed requests per 15-minute slot, node and error class;
- `routing`: per node, model, status and the model group a fallback came from, the
  requests and the router's ROUTING_PARTS of contract/measures.py.

They merge exactly: slots add up into any display bucket (every UTC offset in use is a
multiple of 15 minutes), counts per bin into any percentile. The reader computes a
span's partials with the very views the page reads (queries/setup/views.sql, over that
span as the range), and caches them under the span, the zone and the fingerprints of
the day file and the one before (a day the ETL rewrote is computed again). They answer
where no filter but the range narrows the view and buckets are days; elsewhere, and in
the quarter hours cut by the range's ends, the same views read the requests themselves.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from contract.measures import METRICS, ROUTING_PARTS

LEVEL_CAP = 64  # levels in flight above this are counted together
PROMPT_BANDS = (500, 2000, 8000, 32000)  # prompt tokens: <500, 500-2k, 2k-8k, 8k-32k, >=32k
DICTIONARY = ("node", "model_group", "measure", "error_class", "status", "fell_back_from")
# the columns that add up when partials of several spans merge; the others are the keys
ADDED_VALUES = (
    "n",
    "n_streamed",
    "duration_sum",
    "us",
    "prompt_sum",
    "cached_sum",
    *(p.name for p in ROUTING_PARTS),
)

PARTIAL_SCHEMAS: dict[str, pa.Schema] = {
    "flight": pa.schema(
        [("q15", pa.int64()), ("node", pa.string()), ("peak", pa.int64()), ("request_us", pa.int64())]
    ),
    "perf": pa.schema(
        [
            ("node", pa.string()),
            ("model_group", pa.string()),
            ("measure", pa.string()),
            ("bin", pa.int32()),
            ("n", pa.int64()),
        ]
    ),
    "speed": pa.schema(
        [
            ("local_date", pa.date32()),
            ("node", pa.string()),
            ("measure", pa.string()),
            ("bin", pa.int32()),
            ("n", pa.int64()),
        ]
    ),
    "levels": pa.schema(
        [
            ("node", pa.string()),
            ("model_group", pa.string()),
            ("in_flight", pa.int32()),
            ("measure", pa.string()),
            ("bin", pa.int32()),
            ("n", pa.int64()),
        ]
    ),
    "load": pa.schema(
        [
            ("node", pa.string()),
            ("model_group", pa.string()),
            ("in_flight", pa.int32()),
            ("status", pa.string()),
            ("n", pa.int64()),
            ("n_streamed", pa.int64()),
            ("duration_sum", pa.int64()),
        ]
    ),
    "level_time": pa.schema([("node", pa.string()), ("in_flight", pa.int32()), ("us", pa.int64())]),
    "cache": pa.schema(
        [
            ("local_date", pa.date32()),
            ("node", pa.string()),
            ("model_group", pa.string()),
            ("n", pa.int64()),
            ("prompt_sum", pa.int64()),
            ("cached_sum", pa.int64()),
        ]
    ),
    "bands": pa.schema(
        [
            ("node", pa.string()),
            ("model_group", pa.string()),
            ("band", pa.int32()),
            ("measure", pa.string()),
            ("bin", pa.int32()),
            ("n", pa.int64()),
        ]
    ),
    "failures": pa.schema(
        [
            ("q15", pa.int64()),
            ("node", pa.string()),
            ("error_class", pa.string()),
            ("status", pa.string()),
            ("n", pa.int64()),
        ]
    ),
    "routing": pa.schema(
        [
            ("node", pa.string()),
            ("model_group", pa.string()),
            ("status", pa.string()),
            ("fell_back_from", pa.string()),
            ("n", pa.int64()),
            *((p.name, pa.int64()) for p in ROUTING_PARTS),
        ]
    ),
}

# A day's partials, from the serving views over that day as the range (all raw spans)
PARTIAL_SQL: dict[str, str] = {
    "flight": "SELECT q15, node, peak, request_us FROM flight_slots",
    "perf": """
        SELECT node, model_group, measure, hist_bin(value) AS bin, sum(n) AS n
        FROM serving_perf GROUP BY ALL""",
    "speed": """
        SELECT (bucket_start AT TIME ZONE getvariable('filters').tz::VARCHAR)::DATE AS local_date,
               node, measure, hist_bin(value) AS bin, sum(n) AS n
        FROM serving_speed GROUP BY ALL""",
    "levels": """
        SELECT node, model_group, in_flight, measure, hist_bin(value) AS bin, sum(n) AS n
        FROM serving_levels GROUP BY ALL""",
    "load": """
        SELECT node, model_group, in_flight, status, sum(n) AS n, sum(n_streamed) AS n_streamed,
               sum(duration_sum) AS duration_sum
        FROM serving_load GROUP BY ALL""",
    "level_time": """
        SELECT node, in_flight, sum(us) AS us FROM serving_level_time WHERE in_flight > 0 GROUP BY ALL""",
    "cache": """
        SELECT (bucket_start AT TIME ZONE getvariable('filters').tz::VARCHAR)::DATE AS local_date,
               node, model_group, sum(n) AS n, sum(prompt_sum) AS prompt_sum, sum(cached_sum) AS cached_sum
        FROM serving_cache GROUP BY ALL""",
    "bands": """
        SELECT node, model_group, band, measure, hist_bin(value) AS bin, sum(n) AS n
        FROM serving_bands GROUP BY ALL""",
    "failures": "SELECT q15, node, error_class, status, n FROM failure_slots",
    "routing": f"""
        SELECT node, model_group, status, fell_back_from, sum(n) AS n,
               {", ".join(f"sum({p.name}) AS {p.name}" for p in ROUTING_PARTS)}
        FROM serving_routing GROUP BY ALL""",
}

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
PARTIAL_TABLES = {name: f"window_{name}" for name in PARTIAL_SCHEMAS}


@dataclass(frozen=True)
class Partials:
    """One span's partials, by name (the keys of PARTIAL_SCHEMAS)."""

    tables: dict[str, pa.Table]

    @property
    def nbytes(self) -> int:
        return sum(int(t.nbytes) for t in self.tables.values())


# What several partials read, computed once per span rather than once per partial (a
# third of the time): the sweep of requests in flight, and the span's requests with the
# columns the serving views read of them (all of them were 3x the memory at 30M a year)
READ_ONCE = {
    "flight_segments": "*",
    "scoped": ", ".join(
        dict.fromkeys((
            "start_time", "node", "model_group", "status", "error_class", "q15", "n", "n_streamed",
            "duration_ms", "prompt_tokens", "cached_tokens", "attempted_fallbacks", "original_model_group",
            *MEASURES, *(p.name for p in ROUTING_PARTS),
        ))
    ),
}  # fmt: skip


def compute(cur: duckdb.DuckDBPyConnection) -> Partials:
    """The partials of the range `cur` is set to (a span within a UTC day, read from
    its requests). READ_ONCE's views are kept as temporary tables of the same names while
    it runs: DuckDB looks for a name among the cursor's own temporary tables first, so the
    views above them read the copy, on this cursor only."""
    for view, columns in READ_ONCE.items():
        cur.execute(f"CREATE TEMP TABLE {view} AS SELECT {columns} FROM main.{view}")
    try:
        tables = {}
        for name, sql in PARTIAL_SQL.items():
            tables[name] = _compact(_encoded(cur.sql(sql).to_arrow_table().cast(PARTIAL_SCHEMAS[name])))
        return Partials(tables)
    finally:
        for view in READ_ONCE:
            cur.execute(f"DROP TABLE temp.{view}")


def _compact(table: pa.Table) -> pa.Table:
    """`table` copied into one buffer of its own size. The arrays DuckDB hands over hold
    on to far more memory than they show (at 30M requests a year a month of partials of
    47 MB kept 150 MB more): a cache that keeps them for hours keeps copies."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return pa.ipc.open_stream(sink.getvalue()).read_all()


def empty_tables() -> dict[str, pa.Table]:
    return {name: _stored(schema).empty_table() for name, schema in PARTIAL_SCHEMAS.items()}


def _stored(schema: pa.Schema) -> pa.Schema:
    """The schema as kept: DICTIONARY columns dictionary-encoded."""
    return pa.schema(
        [f.with_type(pa.dictionary(pa.int32(), f.type)) if f.name in DICTIONARY else f for f in schema]
    )


# counts per bin and sums: the same key of several days adds up (flight and failures are
# per slot, and slots of different days never meet)
_ADDED = ("perf", "speed", "levels", "load", "level_time", "cache", "bands", "routing")


def merged(days: list[Partials]) -> dict[str, pa.Table]:
    """Several spans' partials as one table each (what a cursor registers), the counts of
    the same bin added up: a month of levels in flight is 0.4M rows at 10M requests a
    year, 13K once added."""
    if not days:
        return empty_tables()
    out = {}
    for name, schema in PARTIAL_SCHEMAS.items():
        table = pa.concat_tables([d.tables[name] for d in days])
        if name in _ADDED and len(days) > 1:
            keys = [c for c in schema.names if c not in ADDED_VALUES]
            values = [c for c in schema.names if c in ADDED_VALUES]
            grouped = table.cast(schema).group_by(keys, use_threads=False)
            added = grouped.aggregate([(c, "sum") for c in values])
            sums = {c: added[f"{c}_sum"] for c in values}
            table = _encoded(pa.table({c: added[c] for c in keys} | sums).select(schema.names).cast(schema))
        out[name] = table
    return out


def _encoded(table: pa.Table) -> pa.Table:
    """DICTIONARY columns dictionary-encoded: a few nodes, models and measures over
    thousands of rows."""
    for column in DICTIONARY:
        if column in table.column_names:
            at = table.schema.get_field_index(column)
            table = table.set_column(at, column, pc.dictionary_encode(table[column]))
    return table


SLOT = dt.timedelta(minutes=15)
_DAY = dt.timedelta(days=1)


def covered(start: dt.datetime, end: dt.datetime) -> list[tuple[dt.datetime, dt.datetime]]:
    """The spans of [start, end) that partials answer for: its whole quarter hours, cut
    at UTC midnights (one span per day file). The rest (less than a quarter hour at each
    end) is read from the requests. A page's rolling range ends at a quarter hour, so a
    span is computed again at most every quarter hour, and whole days never."""
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    first = epoch + -((epoch - start) // SLOT) * SLOT  # the first quarter hour at or after start
    last = epoch + ((end - epoch) // SLOT) * SLOT
    spans = []
    while first < last:
        midnight = dt.datetime.combine(first.date(), dt.time(), dt.UTC) + _DAY
        spans.append((first, min(midnight, last)))
        first = min(midnight, last)
    return spans
