"""Monthly statements as the store keeps them (docs/store.md, "Statements"): a closed
month is a folder written once and never changed, checked by its checksums when read.

    statements/month=YYYY-MM/statement.json   what it is: the month, its zone, when it was
                                              closed, its totals, the sha256 of each file
    statements/month=YYYY-MM/lines.parquet    one line per person, key and client (and the
                                              earlier months' late requests, as adjustments)
    statements/month=YYYY-MM/requests.parquet the request_id of every request it counts

The folder appears by one rename (ops/statements.py), so a month is closed or not, never
half. Reopening renames it `month=YYYY-MM.reopened-<UTC time>`: kept, never read again.
A request of a closed month that is not in its `requests.parquet` arrived later; the next
month closed lists it as an adjustment, so a closed month's figures never move.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq

from contract.errors import StoreCorrupt

STATEMENTS_DIR = "statements"
MANIFEST = "statement.json"
LINES_FILE = "lines.parquet"
REQUEST_IDS_FILE = "requests.parquet"
REOPENED_MARK = ".reopened-"
FORMAT = 1

USAGE = "usage"  # a line of the month's own requests
ADJUSTMENT = "adjustment"  # a line of an earlier, closed month's requests that came later

_MONTH = re.compile(r"^(\d{4})-(\d{2})$")

LINES_SCHEMA = pa.schema(
    [
        ("kind", pa.string()),  # USAGE or ADJUSTMENT
        ("of_month", pa.string()),  # YYYY-MM the requests started in (the lab's zone)
        ("user", pa.string()),  # as the pages name a person (queries/identity.py)
        ("key_alias", pa.string()),
        ("api_key_hash", pa.string()),
        ("key_name", pa.string()),  # LiteLLM's display form of the key, "sk-...abcd" (key list)
        ("team_id", pa.string()),  # the key's team in LiteLLM's key list at closing
        ("client", pa.string()),
        ("requests", pa.int64()),
        ("failures", pa.int64()),
        ("prompt_cached_tokens", pa.int64()),
        ("prompt_uncached_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("reasoning_tokens", pa.int64()),
        ("spend_usd", pa.float64()),  # what LiteLLM booked
        ("api_cost_usd", pa.float64()),  # at the price in force on each request's day; null: none priced
        ("unpriced_requests", pa.int64()),
        ("max_budget_usd", pa.float64()),  # the key's budget at closing (null: none)
        ("budget_duration", pa.string()),
    ]
)
# the requests a statement counts: its month's own, and the late ones of earlier months it
# lists as adjustments (of_month says which), so that no late request is listed twice
REQUEST_IDS_SCHEMA = pa.schema([("request_id", pa.string()), ("of_month", pa.string())])
# the sums a statement's manifest carries (of its USAGE lines; adjustments apart)
TOTALS = (
    "requests",
    "failures",
    "prompt_cached_tokens",
    "prompt_uncached_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "spend_usd",
    "api_cost_usd",
    "unpriced_requests",
)


class NotAMonth(ValueError):
    """A month that is not written YYYY-MM."""


def parse_month(text: str) -> dt.date:
    """The first day of the month written `YYYY-MM`."""
    match = _MONTH.match(text.strip())
    if not match or not 1 <= int(match.group(2)) <= 12:
        raise NotAMonth(f"{text!r} is not a month: write it YYYY-MM, for example 2026-11")
    return dt.date(int(match.group(1)), int(match.group(2)), 1)


def month_name(first: dt.date) -> str:
    return f"{first.year:04d}-{first.month:02d}"


def next_month(first: dt.date) -> dt.date:
    return dt.date(first.year + first.month // 12, first.month % 12 + 1, 1)


@dataclass(frozen=True)
class MonthSpan:
    first: dt.date
    start: dt.datetime  # UTC instants of the month's first and next month's first midnight
    end: dt.datetime


def month_span(first: dt.date, zone: str) -> MonthSpan:
    """The month in the lab's zone, as UTC instants."""
    tz = ZoneInfo(zone)

    def midnight(day: dt.date) -> dt.datetime:
        return dt.datetime.combine(day, dt.time(), tz).astimezone(dt.UTC)

    return MonthSpan(first, midnight(first), midnight(next_month(first)))


def statement_dir(store: Path, first: dt.date) -> Path:
    return store / STATEMENTS_DIR / f"month={month_name(first)}"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Statement:
    """A closed month, read back and checked."""

    month: dt.date
    zone: str
    closed_at: dt.datetime
    start: dt.datetime  # the month in the lab's zone, as UTC instants: [start, end)
    end: dt.datetime
    totals: dict[str, Any]
    adjustments: dict[str, Any]  # the sums of its ADJUSTMENT lines, by the same names
    lines: pa.Table
    folder: Path

    @property
    def name(self) -> str:
        return month_name(self.month)


def closed_months(store: Path) -> list[dt.date]:
    """The months with a closed statement, oldest first (reopened ones are not)."""
    months = []
    for folder in (store / STATEMENTS_DIR).glob("month=*"):
        text = folder.name.removeprefix("month=")
        if REOPENED_MARK in text or not (folder / MANIFEST).is_file():
            continue
        try:
            months.append(parse_month(text))
        except NotAMonth:
            continue
    return sorted(months)


def manifest(store: Path, first: dt.date) -> dict[str, Any] | None:
    """The closed month's manifest as written; None if the month is not closed."""
    path = statement_dir(store, first) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StoreCorrupt(f"{path} is unreadable ({exc}); the statement cannot be shown") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise StoreCorrupt(f"{path} is not a statement of format {FORMAT}")
    return data


def read_statement(store: Path, first: dt.date) -> Statement | None:
    """The closed statement of the month starting `first`, its files checked against the
    checksums it was closed with; None if the month is not closed. StoreCorrupt if a
    file was changed since: a closed statement is shown as closed, or not at all."""
    data = manifest(store, first)
    if data is None:
        return None
    folder = statement_dir(store, first)
    for name, expected in data["sha256"].items():
        try:
            actual = sha256_of(folder / name)
        except OSError as exc:
            raise StoreCorrupt(f"{folder / name} of the closed statement is unreadable: {exc}") from None
        if actual != expected:
            raise StoreCorrupt(f"{folder / name} was changed after the month was closed (checksum differs)")
    return Statement(
        month=first,
        zone=data["zone"],
        closed_at=dt.datetime.fromisoformat(data["closed_at"]),
        start=dt.datetime.fromisoformat(data["start"]),
        end=dt.datetime.fromisoformat(data["end"]),
        totals=data["totals"],
        adjustments=data["adjustments"],
        lines=pq.read_table(folder / LINES_FILE, schema=LINES_SCHEMA),
        folder=folder,
    )


def counted_request_ids(store: Path, first: dt.date) -> pa.Table:
    """The request ids of the month starting `first` that closed statements count: its
    own statement's, and those later statements list as its adjustments."""
    name, found = month_name(first), []
    for month in closed_months(store):
        if month < first:
            continue
        ids = pq.read_table(statement_dir(store, month) / REQUEST_IDS_FILE, schema=REQUEST_IDS_SCHEMA)
        found.append(ids.filter(pa.compute.equal(ids["of_month"], name)))
    return pa.concat_tables(found) if found else REQUEST_IDS_SCHEMA.empty_table()


def changed_since_closing(store: Path, statement: Statement, day_files: list[Path]) -> bool:
    """Whether a day file of a closed month was written after it was closed (`day_files`:
    those its span touches): only then can a request of it have come late. A few stat
    calls, so that a page or a closing never reads the closed months' requests for nothing."""
    written_ns = (statement.folder / MANIFEST).stat().st_mtime_ns  # the clock of the files, not closed_at
    return any(path.stat().st_mtime_ns >= written_ns for path in day_files if path.is_file())


MONTHS_SCHEMA = pa.schema(
    [
        ("month", pa.string()),
        ("zone", pa.string()),
        ("closed_at", pa.timestamp("us", tz="UTC")),
        ("range_start", pa.timestamp("us", tz="UTC")),
        ("range_end", pa.timestamp("us", tz="UTC")),
    ]
)
CLOSED_LINES_SCHEMA = pa.schema([pa.field("month", pa.string()), *LINES_SCHEMA])


def closed_tables(store: Path) -> tuple[pa.Table, pa.Table, dict[str, str]]:
    """Every closed statement as two tables for the readers: the months (MONTHS_SCHEMA)
    and their lines (CLOSED_LINES_SCHEMA, each with its statement's month); and the
    statements that could not be read or were changed since closing, by their folder in
    the store, with why: left out, never shown as something they are not."""
    months, lines, damaged = [], [], {}
    for first in closed_months(store):
        folder = statement_dir(store, first)
        try:
            statement = read_statement(store, first)
        except (StoreCorrupt, OSError, pa.ArrowException, KeyError, ValueError) as exc:
            damaged[folder.relative_to(store).as_posix()] = str(exc)
            continue
        if statement is None:  # reopened meanwhile
            continue
        months.append(
            {
                "month": statement.name,
                "zone": statement.zone,
                "closed_at": statement.closed_at,
                "range_start": statement.start,
                "range_end": statement.end,
            }
        )
        lines.append(
            statement.lines.add_column(
                0, "month", pa.repeat(pa.scalar(statement.name), statement.lines.num_rows)
            )
        )
    return (
        pa.Table.from_pylist(months, schema=MONTHS_SCHEMA),
        pa.concat_tables(lines).cast(CLOSED_LINES_SCHEMA) if lines else CLOSED_LINES_SCHEMA.empty_table(),
        damaged,
    )


def manifests(store: Path) -> list[Path]:
    """The closed statements' manifests: a snapshot of the store changes with them."""
    return sorted((store / STATEMENTS_DIR).glob(f"month=*/{MANIFEST}"))
