"""One version of the store as a reader holds it, from its loading (queries/snapshot.py)
until a newer one replaces it: the DuckDB connection, the day files, the rollups and
series in memory, and the files left out."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa

from queries import snapshot


@dataclass(frozen=True)
class _Snapshot:
    con: duckdb.DuckDBPyConnection
    version: tuple[tuple[str, int, int], ...]
    first: dt.datetime | None  # oldest and newest request start in the store
    last: dt.datetime | None
    days: dict[dt.date, Path]  # the day files
    rollup_rows: pa.Table  # every month's rollup
    months: dict[dt.date, pa.Table]  # the same, by month (its first day)
    day_rollups: dict[dt.date, pa.Table]  # the recent days' rollups (snapshot.RECENT_DAYS)
    day_series: dict[dt.date, pa.Table]  # each day's series
    fingerprints: dict[dt.date, snapshot.Fingerprint]  # each day file's
    series_zone: str | None  # the zone of every day's series (None: not all the same)
    damaged: dict[str, str]  # store files that could not be read (left out) -> why
