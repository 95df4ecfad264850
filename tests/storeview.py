"""Reading a store back in tests: what a reader (or a person comparing two stores) sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from contract.store import KEYS_FILE, REQUESTS_FILE_SCHEMA, RUNS_FILE, USERS_FILE, requests_dir


def requests(store: Path) -> pa.Table:
    """Every stored request, with the `date` partition column, sorted by request_id."""
    folder = requests_dir(store)
    if not folder.exists():
        return REQUESTS_FILE_SCHEMA.empty_table()
    partitioning = ds.partitioning(pa.schema([("date", pa.date32())]), flavor="hive")
    table = ds.dataset(folder, format="parquet", partitioning=partitioning).to_table()
    return table.sort_by("request_id")


def rows(store: Path) -> dict[str, dict[str, Any]]:
    return {r["request_id"]: r for r in requests(store).to_pylist()}


def runs(store: Path) -> list[dict[str, Any]]:
    path = store / RUNS_FILE
    return pq.read_table(path).to_pylist() if path.exists() else []


def content(store: Path) -> dict[str, Any]:
    """What must be identical between two stores filled from the same source: requests
    (without ingested_at, which says when a row arrived), keys and users (without the
    snapshot time)."""
    reqs = requests(store).drop_columns(["ingested_at"]).to_pylist()
    out: dict[str, Any] = {"requests": reqs}
    for name in (KEYS_FILE, USERS_FILE):
        path = store / name
        out[name] = pq.read_table(path).drop_columns(["snapshot_at"]).to_pylist() if path.exists() else None
    return out
