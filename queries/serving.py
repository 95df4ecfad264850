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

This module: the partials' schemas and SQL, computing a span's, merging several, and the
spans a range is cut into. The views they are computed and read through are in
queries/serving_views.py.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from contract.measures import ROUTING_PARTS
from queries.serving_views import MEASURES, SERVING_STATEMENTS

# what other modules use of the partials (SERVING_STATEMENTS is serving_views.py's)
__all__ = [
    "PARTIAL_TABLES",
    "PROMPT_BANDS",
    "SERVING_STATEMENTS",
    "Partials",
    "compute",
    "covered",
    "empty_tables",
    "merged",
]

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
