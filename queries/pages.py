"""The result sets each page shows, in one place: the pages run them, the benchmark
times them, the tests check them."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Protocol
from zoneinfo import ZoneInfo

import pandas as pd

from contract.statements import month_name, month_span, parse_month
from queries import statements
from queries.filters import Filters, InvalidFilter
from queries.runner import Job, Reader
from queries.serving import PROMPT_BANDS
from settings.config import DashboardSettings

# key -> query; "totals_previous" is totals over the period before (the cards' deltas)
OVERVIEW_QUERIES = {
    "totals": "totals",
    "totals_previous": "totals",
    "by_bucket": "by_bucket",
    "by_node": "by_node",
    "by_user": "by_user",
    "by_client": "by_client",
    "by_model": "by_model",
    "user_client_matrix": "user_client_matrix",
}


# the breakdowns and the column of their names: each shows its busiest names and folds the
# rest into one row (setup/views.sql kept_names), so that no data makes a page large
NAMED = {"by_node": "node", "by_user": "user", "by_client": "client", "by_model": "model"}


def overview(
    reader: Reader,
    filters: Filters,
    *,
    top_names: int = DashboardSettings.top_names,
    grid_names: int = DashboardSettings.grid_names,
    highlight: str | None = None,
) -> dict[str, pd.DataFrame]:
    """The overview's result sets: each breakdown's `top_names` busiest names (the grid's
    `grid_names` users and clients), and the `highlight`ed user whatever their rank."""
    filters = reader.resolve(filters)
    return reader.run_many(overview_jobs(filters, top_names, grid_names, highlight))


# the overview's result sets that keep the highlighted user whatever their rank
WITH_HIGHLIGHT = ("by_user", "user_client_matrix")


def overview_jobs(filters: Filters, top_names: int, grid_names: int, highlight: str | None) -> dict[str, Job]:
    """overview()'s queries over resolved `filters`."""
    params: dict[str, dict[str, Any]] = {
        **{key: {"top_names": top_names} for key in NAMED},
        "by_user": {"top_names": top_names, "highlight": highlight},
        "user_client_matrix": {"grid_names": grid_names, "highlight": highlight},
    }
    return {
        key: (name, filters.previous() if key == "totals_previous" else filters, params.get(key, {}))
        for key, name in OVERVIEW_QUERIES.items()
    }


# the Overview's "at a glance" block (dashboard/glance.py): each node's figures over the
# verdict window and the window before it (its verdict, also atop the Nodes page), and the
# keys LiteLLM refused in the range
VERDICT_QUERIES = {"nodes": "node_verdicts", "nodes_before": "node_verdicts"}
GLANCE_QUERIES = {**VERDICT_QUERIES, "refusals": "refusals_by_key"}
# A node's verdict is over the last VERDICT_DAYS whole days of the range, against as many
# before, whatever the range: its percentiles come from the Nodes page's day partials, and
# over the range and the period before it a first Overview computed twice the range's
# days (62 for 30 days: 35 s at 30M requests, more than the cache holds, again every
# quarter hour as the range rolled). Whole local days: the window moves at midnight only,
# inside the 30 days the server prepares at start.
VERDICT_DAYS = 7


def verdict_window(filters: Filters) -> Filters:
    """The whole local days a verdict is judged over: the VERDICT_DAYS ending with the
    range's last day (today, so far, for a range ending now), no filter but the scope."""
    if filters.start is None or filters.end is None:
        raise InvalidFilter("a verdict needs a range with an end")
    zone = ZoneInfo(filters.tz)
    last = (filters.end - dt.timedelta(microseconds=1)).astimezone(zone).date()
    first = last - dt.timedelta(days=VERDICT_DAYS - 1)
    return replace(
        filters,
        start=dt.datetime.combine(first, dt.time(), zone).astimezone(dt.UTC),
        end=dt.datetime.combine(last + dt.timedelta(days=1), dt.time(), zone).astimezone(dt.UTC),
        bucket=None,
        users=(),
        models=(),
        nodes=(),
        clients=(),
        statuses=(),
        month_to_date=False,
    )


def glance(
    reader: Reader, filters: Filters, names: Mapping[str, str] = GLANCE_QUERIES
) -> dict[str, pd.DataFrame]:
    """The block's result sets by the keys of `names` (GLANCE_QUERIES: all of them, and
    "budgets", budgets(); VERDICT_QUERIES: the nodes' only), the nodes' over
    verdict_window(filters) and the window before it."""
    filters = reader.resolve(filters)
    window = verdict_window(filters)
    over = {"nodes": window, "nodes_before": window.previous(), "refusals": filters}
    found = reader.run_many({key: (name, over[key]) for key, name in names.items()})
    if "refusals" not in names:
        return found
    return found | {"budgets": budgets(reader)}


# the Nodes page; the highlighted user's part is read from the first three again
NODES_QUERIES = (
    "node_performance",
    "model_performance",
    "concurrency",
    "latency_by_concurrency",
    "node_speed_by_bucket",
    "failures_by_bucket",
)


# and what it tells about prefix caching, prompt length and load (issue 18): key -> query
NODES_INSIGHT = (
    "prefix_cache",
    "prefix_cache_by_bucket",
    "prompt_bands",
    "load_table",
    "node_share_by_bucket",
    "routing",
)
# the highlighted user's part, read again over their requests: the node table, their
# latency against concurrency and speed over time, and their requests (and hit rate) in
# each row of the serving insight's tables
NODES_HIGHLIGHTED = (
    "node_performance",
    "latency_by_concurrency",
    "node_speed_by_bucket",
    "prefix_cache",
    "prompt_bands",
    "load_table",
    "routing",
)
# the Nodes page's result sets with rows per model (setup/views.sql top_models)
PER_MODEL = (
    "model_performance",
    "prefix_cache",
    "prefix_cache_by_bucket",
    "prompt_bands",
    "load_table",
    "routing",
)
STABLE_P95_MS = 3000.0  # the load table's stable concurrency: p95 (TTFT if streamed) at most this


def nodes(
    reader: Reader,
    filters: Filters,
    *,
    prompt_bands: tuple[int, ...] = PROMPT_BANDS,
    stable_p95_ms: float = STABLE_P95_MS,
    names: tuple[str, ...] = (*NODES_QUERIES, *NODES_INSIGHT),
    top_names: int = DashboardSettings.top_names,
) -> dict[str, pd.DataFrame]:
    """The Nodes page's result sets `names` (by default all of NODES_QUERIES and
    NODES_INSIGHT); `prompt_bands` are the edges of prompt_bands.sql, `stable_p95_ms`
    load_table.sql's target; rows per model are the `top_names` busiest models'."""
    filters = reader.resolve(filters)
    per_model = {"top_names": top_names}
    params: dict[str, dict[str, Any]] = {
        **dict.fromkeys(PER_MODEL, per_model),
        "prompt_bands": {"edges": list(checked_bands(prompt_bands)), **per_model},
        "load_table": {"stable_p95_ms": checked_target(stable_p95_ms), **per_model},
    }
    return reader.run_many({name: (name, filters, params.get(name, {})) for name in names})


def checked_bands(edges: tuple[int, ...]) -> tuple[int, ...]:
    """Prompt-band edges as prompt_bands.sql needs them, or an error saying what is wrong."""
    if not edges or any(isinstance(e, bool) or not isinstance(e, int) or e <= 0 for e in edges):
        raise InvalidFilter(f"prompt bands must be positive whole numbers of tokens, not {edges!r}")
    if list(edges) != sorted(set(edges)):
        raise InvalidFilter(f"prompt band edges must go up, each once: {edges!r}")
    return tuple(edges)


def checked_target(ms: float) -> float:
    if isinstance(ms, bool) or not isinstance(ms, int | float) or not 0 < ms < float("inf"):
        raise InvalidFilter(f"the stable p95 latency target must be a positive number of ms, not {ms!r}")
    return float(ms)


# the ETL status page: how the ETL is doing, and how far each source has been copied
STATUS_QUERIES = ("etl_health", "etl_runs", "sources", "newest_by_node")
RECENT_RUNS = 50


def etl_status(reader: Reader, now: dt.datetime) -> dict[str, pd.DataFrame]:
    # "The last 24 hours" start at a whole minute: every view of the page in the same
    # minute shares one answer (with `now` itself, each view was a new query, ~0.1 s)
    minute = now.replace(second=0, microsecond=0)
    last_day = Filters(start=minute - dt.timedelta(hours=24), end=minute + dt.timedelta(minutes=1))
    params: dict[str, dict[str, Any]] = {
        "etl_health": {"now": minute},
        "etl_runs": {"limit": RECENT_RUNS},
    }
    filters = {"newest_by_node": last_day}
    return {name: reader.run(name, filters.get(name), **params.get(name, {})) for name in STATUS_QUERIES}


# a budget's pace: its spend over the week before LiteLLM's key list was copied
BURN_WEEK = dt.timedelta(days=7)


def budgets(reader: Reader) -> pd.DataFrame:
    """Every key in scope against its budget, with the forecast at its pace (budgets.sql),
    as of the key list's copy: the spend LiteLLM counted then, and the week before it."""
    copied = reader.run("keys_copied")["copied_at"].iloc[0]
    if pd.isna(copied):
        return reader.run("budgets")  # no key list: no budgets, and no week to pace them by
    copied = pd.Timestamp(copied).to_pydatetime()
    return reader.run("budgets", Filters(start=copied - BURN_WEEK, end=copied, tz="UTC"))


def budget_refusals(reader: Reader) -> pd.DataFrame:
    """The keys LiteLLM refused for budget or rate limit (refusals_by_key.sql) over the
    week budgets reads: the one before the key list was copied."""
    copied = reader.run("keys_copied")["copied_at"].iloc[0]
    if pd.isna(copied):
        # no key list, so no budgets to count refusals for: a second of 1970, which no
        # request falls in, gives the empty result with its columns
        return reader.run(
            "refusals_by_key", Filters(start=_EPOCH, end=_EPOCH + dt.timedelta(seconds=1), tz="UTC")
        )
    copied = pd.Timestamp(copied).to_pydatetime()
    return reader.run("refusals_by_key", Filters(start=copied - BURN_WEEK, end=copied, tz="UTC"))


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def limits(reader: Reader) -> pd.DataFrame:
    """Every key in scope with a tpm or rpm limit against its busiest minute, and the
    requests LiteLLM refused it (key_limits.sql), over the week budgets reads: the one
    before the key list was copied, whose limits those are."""
    copied = reader.run("keys_copied")["copied_at"].iloc[0]
    if pd.isna(copied):
        return reader.run("key_limits")  # no key list: no limits
    copied = pd.Timestamp(copied).to_pydatetime()
    return reader.run("key_limits", Filters(start=copied - BURN_WEEK, end=copied, tz="UTC"))


# the cost at API prices (the price book): the range's totals, per dimension, what is not priced
API_COST_QUERIES = {
    "totals": "api_cost_totals",
    "by_user": "api_cost_by_user",
    "by_node": "api_cost_by_node",
    "by_model": "api_cost_by_model",
    "by_client": "api_cost_by_client",
    "unpriced": "unpriced_models",
}


def api_cost(
    reader: Reader, filters: Filters, *, top_names: int = DashboardSettings.top_names
) -> dict[str, pd.DataFrame]:
    """What the range's requests would have cost at API prices, by the keys of
    API_COST_QUERIES; nothing (an empty dict) without a price book: the page then shows
    none of it, rather than a made-up number."""
    filters = reader.resolve(filters)
    if not reader.run("api_cost_totals", filters)["price_entries"].iloc[0]:
        return {}
    return reader.run_many(
        {
            key: (name, filters, {"top_names": top_names} if key != "totals" else {})
            for key, name in API_COST_QUERIES.items()
        }
    )


# --- monthly statements (contract/statements.py; closed by ops/statements.py) ------------


class StatementReader(Reader, statements.LateReader, Protocol):
    """A reader whose cursor a statement's late requests are read with."""


# the open months the Statements page offers as drafts: this month and the one before
OPEN_MONTHS = 2


def statement_months(reader: Reader, zone: str, now: dt.datetime) -> pd.DataFrame:
    """Every closed month with its totals as this session may see them (statements.sql),
    and before them the last OPEN_MONTHS months not closed yet (`closed_at` empty)."""
    closed = reader.run("statements")
    this_month = now.astimezone(ZoneInfo(zone)).date().replace(day=1)
    months = [this_month]
    while len(months) < OPEN_MONTHS:
        months.append((months[-1] - dt.timedelta(days=1)).replace(day=1))
    shown = set(closed["month"])
    open_rows = [_open_month(reader, first, zone) for first in months if month_name(first) not in shown]
    return pd.concat([pd.DataFrame(open_rows), closed], ignore_index=True).sort_values(
        "month", ascending=False, ignore_index=True
    )


def _open_month(reader: Reader, first: dt.date, zone: str) -> dict[str, Any]:
    """An open month's totals so far, as its draft has them (the rollups: cheap)."""
    span = month_span(first, zone)
    filters = Filters(start=span.start, end=span.end, tz=zone)
    totals = reader.run("totals", filters).iloc[0]
    cost = reader.run("api_cost_totals", filters).iloc[0]
    return {
        "month": month_name(first),
        "zone": zone,
        "requests": int(totals["requests"]),
        "spend_usd": float(totals["spend_usd"]),
        "api_cost_usd": cost["api_cost_usd"],
    }


def statement(reader: StatementReader, month: str, zone: str, *, closed: bool) -> pd.DataFrame:
    """The lines of `month` (YYYY-MM) this session may see: as closed (statement.sql,
    never recomputed) or, for an open month, its draft from the store as it is now, with
    the late requests of closed months its closing will list as adjustments."""
    if closed:
        return reader.run("statement", month=month)
    first = parse_month(month)
    span = month_span(first, zone)
    draft = reader.run("statement_lines", Filters(start=span.start, end=span.end, tz=zone))
    pending, _ = statements.late(reader, first, zone)  # what its closing will list
    return pd.concat([draft.assign(kind="usage", of_month=month), pending], ignore_index=True)


ADOPTION_QUERIES = ("client_adoption", "client_first_use")


def adoption(reader: Reader, filters: Filters) -> dict[str, pd.DataFrame]:
    """Each client's active users per day, week and month of the range, and when each
    person first used each client (over everything in scope)."""
    return reader.run_many({name: (name, filters) for name in ADOPTION_QUERIES})
