"""Writing the rollups and series of docs/store.md (how they are named and summed:
contract/rollups.py). The ETL builds a day's under the store's lock after replacing its
day file; `python -m etl rollup` builds every missing one."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from contract.rollups import PREFIX, SERIES_PREFIX, Source, read_day, series, summarise
from contract.store import ROLLUPS_DIR, day_file, stored_days
from etl.files import atomic_write_table, fsync_dir

log = logging.getLogger("etl")


def build(store: Path, day: dt.date, zone: str) -> Path | None:
    """Write the rollup and the series (in display zone `zone`) of `day`'s current file
    (the ETL, under the store's lock), and remove the day's older ones. None when the day
    has no file."""
    source = Source.of(store, day)
    if source is None:
        return None
    rows = read_day(source)
    if rows is None:
        return None
    target = source.rollup_path(store)
    atomic_write_table(target, summarise(rows, day))
    timeline = source.series_path(store, zone)
    atomic_write_table(timeline, series(rows, day, zone))
    for old in [*target.parent.glob(f"{PREFIX}*.parquet"), *target.parent.glob(f"{SERIES_PREFIX}*.parquet")]:
        if old not in (target, timeline):
            old.unlink(missing_ok=True)
    fsync_dir(target.parent)
    return target


def remove_all(store: Path) -> None:
    """Delete every rollup and series (they are rebuilt from the day files)."""
    for prefix in (PREFIX, SERIES_PREFIX):
        for path in (store / ROLLUPS_DIR).glob(f"date=*/{prefix}*.parquet"):
            path.unlink(missing_ok=True)


def current(store: Path, day: dt.date, zone: str) -> bool:
    """Whether the day's file has its rollup and its series in `zone` (a few stat calls,
    no file read)."""
    source = Source.of(store, day)
    return source is None or (
        source.rollup_path(store).is_file() and source.series_path(store, zone).is_file()
    )


def missing(store: Path, zone: str) -> list[dt.date]:
    """The days whose file has no current rollup or series."""
    return [day for day in stored_days(store) if not current(store, day, zone)]


def refresh(store: Path, day: dt.date, zone: str) -> bool:
    """Build the day's rollup and series unless they are current; True if built."""
    if current(store, day, zone):
        return False
    return build(store, day, zone) is not None


def ensure(
    store: Path, zone: str, progress: Callable[[str], None] | None = None, every_s: float = 2.0
) -> int:
    """Build every missing rollup (never built, built by an older version, or the day file
    changed after it); returns how many. Idempotent, and resumable: what a killed call
    built stays built. A day file that cannot be read is named in a warning and skipped:
    readers sum it themselves if they can, and `python -m etl doctor` reports it."""
    days = missing(store, zone)
    if not days:
        return 0
    import duckdb  # noqa: PLC0415  only now: see contract.rollups._summed

    built, reported = 0, time.monotonic()
    for i, day in enumerate(days, 1):
        try:
            built += build(store, day, zone) is not None
        except (OSError, pa.ArrowException, duckdb.Error) as exc:
            log.warning("could not build the rollup of %s from %s: %s", day, day_file(store, day), exc)
        if progress and (time.monotonic() - reported >= every_s or i == len(days)):
            reported = time.monotonic()
            progress(f"rollups: {i:,}/{len(days):,} days built")
    return built
