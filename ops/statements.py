"""Closing a month: its statement written once into the store, never changed after.

`python -m etl close-month YYYY-MM` (ops/cli.py) computes the month's lines with the query
the Statements page shows as a draft (queries/statement_lines.sql), under the ETL's lock so
that no run changes the store meanwhile, adds the late requests of earlier closed months
as adjustments, and writes the folder of contract/statements.py by one rename. Here,
above both etl/ and queries/, because it reads the store through the query layer and
writes it as the ETL does.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import secrets
import shutil
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contract.statements import (
    ADJUSTMENT,
    FORMAT,
    LINES_FILE,
    LINES_SCHEMA,
    MANIFEST,
    REOPENED_MARK,
    REQUEST_IDS_FILE,
    TOTALS,
    USAGE,
    MonthSpan,
    Statement,
    closed_months,
    month_name,
    month_span,
    next_month,
    parse_month,
    read_statement,
    sha256_of,
    statement_dir,
)
from etl.files import PARQUET_OPTIONS, fsync_dir, make_dirs
from etl.run import store_lock
from queries import statements as statement_queries
from queries.runner import StoreReader
from settings.config import Config
from settings.errors import UsageError

log = logging.getLogger("etl")


class StatementRefused(UsageError):
    """A close or reopen that would change what a statement says, or close too early."""

    exit_code = 2


def close_month(config: Config, month: str, *, now: dt.datetime | None = None) -> Statement:
    """Close `month` (YYYY-MM, in the lab's zone): refused for the current or a future
    month and for a closed one. Returns the statement as read back from the store."""
    first = parse_month(month)
    zone = config.dashboard.timezone
    now = now or dt.datetime.now(dt.UTC)
    span = month_span(first, zone)
    if span.end > now:
        this_month = now.astimezone(ZoneInfo(zone)).date().replace(day=1)
        raise StatementRefused(
            f"{month_name(first)} has not ended yet in {zone} (it is {month_name(this_month)} there): "
            "a month is closed once it is over"
        )
    store = config.store
    with store_lock(store):
        closed = read_statement(store, first)
        if closed is not None:
            raise StatementRefused(
                f"{closed.name} was closed on {closed.closed_at:%Y-%m-%d %H:%M} UTC and its statement "
                f"never changes; to close it anew, reopen it first: python -m etl reopen-month {closed.name} "
                '--reason "..."'
            )
        reader = StoreReader(store, zone=zone, share_results=False, prices=config.prices)
        filters = statement_queries.month_filters(span.start, span.end, zone)
        lines = _with_kind(reader.run("statement_lines", filters), USAGE, first)
        late, late_ids = statement_queries.late(reader, first, zone)
        adjustments = [late] if not late.empty else []
        ids = pa.concat_tables(
            [statement_queries.request_ids(store, span.start, span.end, month_name(first)), late_ids]
        )
        table = _table([lines, *adjustments])
        _write(store, span, zone=zone, now=now, lines=table, ids=ids)
    statement = read_statement(store, first)
    assert statement is not None  # just written
    log.info(
        "closed %s: %s lines, %s requests, %s adjustment lines",
        statement.name,
        f"{table.num_rows - sum(len(a) for a in adjustments):,}",
        f"{statement.totals['requests']:,}",
        f"{sum(len(a) for a in adjustments):,}",
    )
    return statement


def close_due(config: Config, now: dt.datetime) -> list[Statement]:
    """The months `[statements] close_after_days` says are due, closed (after a run): every
    ended month since the newest closed one whose end is that many days past, or, in a
    store with none closed yet, the last ended month only (never the whole history at
    once). A month refused (closed meanwhile by hand) is left as it is."""
    days = config.statements.close_after_days
    if days is None:
        return []
    zone = config.dashboard.timezone
    this_month = now.astimezone(ZoneInfo(zone)).date().replace(day=1)
    closed = closed_months(config.store)
    due, month = [], closed[-1] if closed else None
    candidate = next_month(month) if month else (this_month - dt.timedelta(days=1)).replace(day=1)
    while candidate < this_month and month_span(candidate, zone).end + dt.timedelta(days=days) <= now:
        due.append(candidate)
        candidate = next_month(candidate)
    done = []
    for first in due:
        try:
            done.append(close_month(config, month_name(first), now=now))
        except StatementRefused as exc:
            log.info("not closing %s by itself: %s", month_name(first), exc)
    return done


def reopen_month(config: Config, month: str, reason: str, *, now: dt.datetime | None = None) -> Path:
    """Set a closed month's statement aside (renamed, kept, never read again) so that it
    can be closed anew; the reason is logged and kept beside it. Returns where it went."""
    first = parse_month(month)
    if not reason.strip():
        raise StatementRefused(
            'say why the month is reopened: --reason "..." (it is kept with the statement)'
        )
    now = now or dt.datetime.now(dt.UTC)
    store = config.store
    with store_lock(store):
        if read_statement(store, first) is None:
            raise StatementRefused(f"{month_name(first)} is not closed: there is nothing to reopen")
        later = [month_name(m) for m in closed_months(store) if m > first]
        if later:
            raise StatementRefused(
                f"{month_name(first)} cannot be reopened while a later month is closed ({', '.join(later)}): "
                "its adjustments count this month's late requests; reopen the later months first, "
                "newest first"
            )
        folder = statement_dir(store, first)
        aside = folder.with_name(f"{folder.name}{REOPENED_MARK}{now:%Y%m%dT%H%M%SZ}")
        (folder / "reopened.json").write_text(
            json.dumps({"reopened_at": now.isoformat(), "reason": reason}, indent=2) + "\n", encoding="utf-8"
        )
        folder.rename(aside)
        fsync_dir(folder.parent)
    log.warning("reopened %s (%s); its statement is kept as %s", month_name(first), reason, aside)
    return aside


def _with_kind(frame: pd.DataFrame, kind: str, month: dt.date) -> pd.DataFrame:
    return frame.assign(kind=kind, of_month=month_name(month))


def _table(frames: list[pd.DataFrame]) -> pa.Table:
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    columns = {
        field.name: pa.array(
            rows[field.name].astype(object).where(rows[field.name].notna(), None).tolist()
            if field.name in rows
            else [],
            field.type,
        )
        for field in LINES_SCHEMA
    }
    return pa.table(columns, schema=LINES_SCHEMA)


def _sums(table: pa.Table, kind: str) -> dict[str, Any]:
    rows = table.filter(pc.equal(table["kind"], kind))
    sums: dict[str, Any] = {}
    for name in TOTALS:
        column = rows[name]
        if name == "api_cost_usd" and column.null_count == len(column):
            sums[name] = None  # nothing priced: "not priced", never 0
        else:
            total = pc.sum(column).as_py()
            sums[name] = total if total is not None else 0
    return sums


def _write(
    store: Path, span: MonthSpan, *, zone: str, now: dt.datetime, lines: pa.Table, ids: pa.Table
) -> None:
    """The statement's folder, written in a staging folder beside it and renamed into
    place: a month is closed whole or not at all."""
    first = span.first
    final = statement_dir(store, first)
    staging = final.with_name(f".staging-{final.name}-{secrets.token_hex(4)}")
    make_dirs(staging)
    try:
        pq.write_table(lines, staging / LINES_FILE, **PARQUET_OPTIONS)
        pq.write_table(ids, staging / REQUEST_IDS_FILE, **PARQUET_OPTIONS)
        data = {
            "format": FORMAT,
            "month": month_name(first),
            "zone": zone,
            "start": span.start.isoformat(),
            "end": span.end.isoformat(),
            "closed_at": now.astimezone(dt.UTC).isoformat(),
            "totals": _sums(lines, USAGE),
            "adjustments": _sums(lines, ADJUSTMENT),
            "sha256": {name: sha256_of(staging / name) for name in (LINES_FILE, REQUEST_IDS_FILE)},
        }
        (staging / MANIFEST).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        for name in (LINES_FILE, REQUEST_IDS_FILE, MANIFEST):
            with (staging / name).open("rb") as handle:
                os.fsync(handle.fileno())
        fsync_dir(staging)
        staging.rename(final)  # fails if the folder exists: never over a closed month
        fsync_dir(final.parent)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
