"""The result sets each page shows, in one place: the pages run them, the benchmark
times them, the tests check them."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd

from queries.filters import Filters
from queries.runner import Reader

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


def overview(reader: Reader, filters: Filters) -> dict[str, pd.DataFrame]:
    filters = reader.resolve(filters)
    jobs = {
        key: (name, filters.previous() if key == "totals_previous" else filters)
        for key, name in OVERVIEW_QUERIES.items()
    }
    return reader.run_many(jobs)


# the Nodes page; the highlighted user's part is read from the first three again
NODES_QUERIES = (
    "node_performance",
    "model_performance",
    "concurrency",
    "latency_by_concurrency",
    "node_speed_by_bucket",
    "failures_by_bucket",
)
NODES_HIGHLIGHTED = ("node_performance", "latency_by_concurrency", "node_speed_by_bucket")


def nodes(reader: Reader, filters: Filters) -> dict[str, pd.DataFrame]:
    filters = reader.resolve(filters)
    return reader.run_many({name: (name, filters) for name in NODES_QUERIES})


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


def api_cost(reader: Reader, filters: Filters) -> dict[str, pd.DataFrame]:
    """What the range's requests would have cost at API prices, by the keys of
    API_COST_QUERIES; nothing (an empty dict) without a price book: the page then shows
    none of it, rather than a made-up number."""
    filters = reader.resolve(filters)
    if not reader.run("api_cost_totals", filters)["price_entries"].iloc[0]:
        return {}
    return reader.run_many({key: (name, filters) for key, name in API_COST_QUERIES.items()})
