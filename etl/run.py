"""One ETL run: lock the store, read what is new, stage it, fold it in, move the bookmark.

Order matters for crash safety: day files are replaced (atomically, durably) before the
bookmark moves, so a run killed anywhere is repeated by the next one from the old
bookmark, and request_ids already stored are skipped.

One module because it is the order of a run, and crash safety lives in that order: the
steps themselves are in extract, transform, load, rollup and state.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import gc
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psycopg
import pyarrow as pa
import pyarrow.compute as pc
from sqlalchemy.engine import URL

from contract.state import State, read_state
from contract.store import DEMO_FILE, KEYS_FILE, LOCK_FILE, USERS_FILE
from etl import extract, load, rollup
from etl.errors import RunInProgress, SourceRefused, SourceUnreachable, StoreNotWritable
from etl.failpoints import failpoint
from etl.files import remove_leftovers
from etl.state import write_state
from etl.transform import NOISE_REASONS, Rules, Transformed, transform
from settings.config import Config
from settings.errors import ConfigError, UsageError

log = logging.getLogger("etl")

DEFAULT_OVERLAP_MINUTES = {"created_at": 10.0, "startTime": 120.0}
FUTURE_TOLERANCE = dt.timedelta(minutes=2)
PROGRESS_EVERY_S = 2.0


@dataclass
class RunSummary:
    run_id: str
    mode: str = "incremental"  # incremental | full_refresh
    cursor_column: str | None = None
    cursor_from: dt.datetime | None = None
    cursor_to: dt.datetime | None = None
    rows_read: int = 0
    rows_written: int = 0
    duplicates_skipped: int = 0
    dropped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(NOISE_REASONS, 0))
    malformed: int = 0
    malformed_skipped: int = 0  # malformed rows that could not be placed, hence not stored
    malformed_examples: list[str] = field(default_factory=list)
    kept_noise_tagged: int = 0
    # values of LiteLLM's key and user tables out of range (infinity, BC, after 9999), read
    # as unknown, per "table.column"
    unknown_values: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    note: str | None = None  # why the whole source was read, when it was

    def _skipped(self) -> str:
        return f" ({self.malformed_skipped:,} of them skipped)" if self.malformed_skipped else ""

    def line(self) -> str:
        """The one-line summary a person reads at the end of a run."""
        skipped = "replaced" if self.mode == "full_refresh" else "duplicates skipped"
        return (
            f"{self.mode.replace('_', ' ')} run: {self.rows_read:,} rows read, "
            f"{self.rows_written:,} written, {self.duplicates_skipped:,} {skipped}, noise dropped: "
            f"{self.dropped['master_key']:,} master key, {self.dropped['health_check']:,} health check, "
            f"{self.dropped['rule']:,} by rule; {self.malformed:,} malformed{self._skipped()}; "
            f"{self._unknown()}{self.seconds:.1f} s"
        )

    def _unknown(self) -> str:
        n = sum(self.unknown_values.values())
        return f"{n:,} key or user time(s) unknown; " if n else ""


def run_etl(
    config: Config,
    *,
    full_refresh: bool = False,
    progress: Callable[[str], None] | None = None,
) -> RunSummary:
    """Run the ETL once against `config.source.url`, writing `config.store`."""
    if not config.source.url:
        raise ConfigError(
            "no LiteLLM database given: pass --source postgresql://user:password@host:5432/litellm "
            "or set LITELLM_DATABASE_URL (or DATABASE_URL, as LiteLLM does)"
        )
    if (config.store / DEMO_FILE).is_file():
        raise ConfigError(
            f"{config.store} is a demo store (simulated data); the ETL never writes real rows into it. "
            "Give the real store another directory (--store or USAGE_STORE)."
        )
    url = extract.parse_source_url(config.source.url)
    _ensure_writable(config.store)
    with store_lock(config.store):
        run = _Run(config, full_refresh, progress)
        return run.execute(lambda: run._extract_and_stage(url, read_state(config.store)))


def ingest_rows(config: Config, rows: Iterable[Mapping[str, Any]], *, chunk_rows: int = 20_000) -> RunSummary:
    """Fold LiteLLM-shaped rows from Python (the demo, tests) into `config.store` the way
    a run does: same transform, same staging and merge, same etl_runs record. The
    bookmark is not touched: these rows do not come from a database."""
    _ensure_writable(config.store)
    with store_lock(config.store):
        run = _Run(config, False, None)
        return run.execute(lambda: run._stage_rows(rows, chunk_rows))


def rebuild_rollups(
    store: Path, zone: str, *, everything: bool = False, progress: Callable[[str], None] | None = None
) -> int:
    """`python -m etl rollup`: build the rollups the store lacks (`everything`: all of
    them anew), under the store's lock like a run; returns how many were built."""
    if not store.is_dir():
        raise StoreNotWritable(f"there is no store at {store}; check --store (or USAGE_STORE)")
    _ensure_writable(store)
    with store_lock(store):
        remove_leftovers(store)
        if everything:
            rollup.remove_all(store)
        return rollup.ensure(store, zone, progress)


class _Run:
    """One run under the store's lock; its steps share the summary they fill in."""

    def __init__(
        self,
        config: Config,
        full_refresh: bool,
        progress: Callable[[str], None] | None,
    ) -> None:
        self.config = config
        self.store = config.store
        self.full_refresh = full_refresh
        self.progress = progress
        self.started = dt.datetime.now(dt.UTC)
        self.summary = RunSummary(run_id=f"{self.started:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}")
        self.staging = load.Staging(self.store, self.summary.run_id)

    def execute(self, stage: Callable[[], State | None]) -> RunSummary:
        """`stage` fills the staging area and returns the bookmark to keep (None: as is)."""
        clock = time.monotonic()
        summary = self.summary
        load.remove_staging(self.store)
        remove_leftovers(self.store)
        try:
            # days without a current rollup: all of them on the first run after an upgrade,
            # one a killed run left; a stat per day otherwise
            rollup.ensure(self.store, self.config.dashboard.timezone, self.progress)
            new_state = stage()
            self._merge()
            if new_state is not None:
                write_state(self.store, new_state)
            failpoint("state-written")
        except BaseException as exc:
            summary.seconds = time.monotonic() - clock
            self._record("failed", _error_text(exc))
            raise
        finally:
            self.staging.remove()
        summary.seconds = time.monotonic() - clock
        self._record("ok", None)
        if summary.malformed:
            log.warning(
                "%d row(s) had malformed values (%d kept with defaults, %d skipped: not stored); first: %s",
                summary.malformed,
                summary.malformed - summary.malformed_skipped,
                summary.malformed_skipped,
                "; ".join(summary.malformed_examples),
            )
        if summary.unknown_values:
            log.warning(
                "%d time(s) in LiteLLM's key and user tables are infinity, BC or after year 9999, "
                "read as unknown (an expiry before year 1 as expired, one after 9999 as never): %s",
                sum(summary.unknown_values.values()),
                ", ".join(f"{column} ({n:,})" for column, n in sorted(summary.unknown_values.items())),
            )
        if summary.kept_noise_tagged:
            log.warning(
                "%d request(s) from user keys carry a noise tag (a health check's, or one of "
                "noise.tags): kept as usage, since clients set tags themselves",
                summary.kept_noise_tagged,
            )
        return summary

    def _stage_rows(self, rows: Iterable[Mapping[str, Any]], chunk_rows: int) -> None:
        rules = Rules.from_config(self.config)
        batch: list[Mapping[str, Any]] = []
        for row in [*rows, None]:
            if row is not None:
                batch.append(row)
            if batch and (row is None or len(batch) >= chunk_rows):
                raw = extract.table_from_rows(batch)
                self.summary.rows_read += raw.num_rows
                self._stage(transform(raw, rules, self.started))
                batch = []

    def _stage(self, out: Transformed) -> None:
        summary = self.summary
        self.staging.add(out.table, out.dropped_rows if summary.mode == "full_refresh" else None)
        failpoint("chunk-staged")
        for reason, n in out.dropped.items():
            summary.dropped[reason] += n
        summary.malformed += out.malformed
        summary.malformed_skipped += out.skipped
        summary.malformed_examples = (summary.malformed_examples + out.malformed_examples)[:5]
        summary.kept_noise_tagged += out.noise_tagged

    def _extract_and_stage(self, url: URL, state: State) -> State:
        try:
            with extract.connect(url) as conn:
                # one snapshot for spend logs, keys and users alike
                conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
                new_state = self._stage_spend_logs(conn, url, state)
                keys = extract.read_keys(conn, self.started)
                users = extract.read_users(conn, self.started)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise SourceRefused(
                f"the LiteLLM database refused a read: {extract.first_line(exc)}. The ETL's database "
                'user needs SELECT on "LiteLLM_SpendLogs", "LiteLLM_VerificationToken", '
                '"LiteLLM_UserTable" and "LiteLLM_BudgetTable"'
            ) from None
        except psycopg.errors.QueryCanceled as exc:
            raise SourceRefused(f"the LiteLLM database cancelled a read: {extract.first_line(exc)}") from None
        except psycopg.OperationalError as exc:
            raise SourceUnreachable(
                f"lost the connection to the LiteLLM database {extract.describe_source(url)}: "
                f"{extract.first_line(exc)}. Nothing was changed; the next run starts over."
            ) from None
        load.write_snapshot(self.store / KEYS_FILE, keys.table)
        load.write_snapshot(self.store / USERS_FILE, users.table)
        self.summary.unknown_values = keys.unreadable | users.unreadable
        failpoint("snapshots-written")
        return new_state

    def _stage_spend_logs(self, conn: psycopg.Connection[Any], url: URL, state: State) -> State:
        settings = self.config.source
        summary = self.summary
        rules = Rules.from_config(self.config)
        fingerprint = extract.source_fingerprint(url)
        info = extract.inspect_source(conn, url.database or "?")
        cursor = _cursor_column(settings.cursor, info)
        summary.cursor_column = cursor
        # Nothing copied may move the bookmark past the database's own clock: a row from a
        # fast clock (or created_at backfilled in the server's local time) waits its turn.
        ceiling = _db_now_utc(conn) + FUTURE_TOLERANCE
        window = self._plan(state, fingerprint, cursor, info, ceiling)
        if summary.mode == "full_refresh" and not state.full_refresh_pending:
            # If this run dies, the next one must finish the refresh, not go incremental.
            write_state(self.store, replace(state, full_refresh_pending=True))
        summary.cursor_from = window.cursor_from if window else None
        # the old bookmark only counts for the same database and cursor column
        same = state.source == fingerprint and state.cursor_column == cursor
        cursor_max, start_max = (state.cursor, state.start_max) if same else (None, None)
        # Noise and repairs are counted once: rows at or behind the bookmark were counted by
        # the run that first read them (the overlap re-reads them every time).
        counted_after = state.cursor if same and window is not None else None
        cursor_field = "created_at" if cursor == "created_at" else "start_time"
        expected = info.estimated_rows if window is None else 0
        last_report = time.monotonic()
        gc_was_enabled = gc.isenabled()
        gc.disable()  # millions of short-lived tuples: collection passes cost, never help
        try:
            for raw in extract.read_spend_logs(conn, info, window, settings.chunk_rows):
                summary.rows_read += raw.num_rows
                cursor_max = _max(cursor_max, raw[cursor_field], ceiling)
                start_max = _max(start_max, raw["start_time"], ceiling)
                count = None if counted_after is None else pc.greater(raw[cursor_field], counted_after)
                self._stage(transform(raw, rules, self.started, count=count))
                if self.progress and time.monotonic() - last_report >= PROGRESS_EVERY_S:
                    last_report = time.monotonic()
                    self.progress(_progress_text(summary.rows_read, expected, self.started))
        except psycopg.DataError as exc:  # SQLSTATE class 22: a value PostgreSQL cannot convert
            raise extract.unreadable_value(info, exc) from None
        finally:
            if gc_was_enabled:
                gc.enable()
        summary.cursor_to = cursor_max
        return State(source=fingerprint, cursor_column=cursor, cursor=cursor_max, start_max=start_max)

    def _merge(self) -> None:
        full = self.summary.mode == "full_refresh"
        for day in self.staging.days():
            merged = load.merge_day(
                self.store, day, self.staging.kept(day), replace=self.staging.seen(day) if full else None
            )
            self.summary.rows_written += merged.written
            self.summary.duplicates_skipped += merged.already_stored
            failpoint("day-merged")
            rollup.refresh(self.store, day, self.config.dashboard.timezone)
            failpoint("rollup-written")

    def _plan(
        self, state: State, fingerprint: str, cursor: str, info: extract.SourceInfo, ceiling: dt.datetime
    ) -> extract.Window | None:
        """Which rows to read; None means the whole table."""
        summary = self.summary
        if self.full_refresh or state.full_refresh_pending:
            summary.mode = "full_refresh"
            if state.full_refresh_pending and not self.full_refresh:
                summary.note = "finishing a full refresh that an earlier run began"
            return None
        if state.cursor is None:
            summary.note = "first run on this store: reading the whole table"
            return None
        if state.source != fingerprint:
            summary.note = (
                f"the store's bookmark belongs to {state.source}, not {fingerprint}: reading the "
                "whole table once (rows already stored are skipped)"
            )
            return None
        if state.cursor_column != cursor:
            summary.note = (
                f"the cursor changed from {state.cursor_column} to {cursor}: reading the whole "
                "table once (rows already stored are skipped)"
            )
            return None
        settings = self.config.source
        overlap = settings.overlap_minutes
        if overlap is None:
            overlap = DEFAULT_OVERLAP_MINUTES[cursor]
        cursor_from = state.cursor - dt.timedelta(minutes=overlap)
        start_floor = None
        if (
            cursor == "created_at"
            and not info.created_at_indexed
            and settings.max_lateness_hours > 0
            and state.start_max is not None
        ):
            # created_at has no index: bound startTime too, so PostgreSQL reads the recent
            # part of its startTime index instead of the whole table.
            start_floor = state.start_max - dt.timedelta(hours=settings.max_lateness_hours, minutes=overlap)
        return extract.Window(
            cursor=cursor, cursor_from=cursor_from, cursor_to=ceiling, start_floor=start_floor
        )

    def _record(self, status: str, error: str | None) -> None:
        summary = self.summary
        record = {
            "run_id": summary.run_id,
            "started_at": self.started,
            "finished_at": dt.datetime.now(dt.UTC),
            "status": status,
            "mode": summary.mode,
            "cursor_column": summary.cursor_column,
            "rows_read": summary.rows_read,
            "rows_written": summary.rows_written,
            "duplicates_skipped": summary.duplicates_skipped,
            "dropped_master_key": summary.dropped["master_key"],
            "dropped_health_check": summary.dropped["health_check"],
            "dropped_by_rule": summary.dropped["rule"],
            "rows_malformed": summary.malformed,
            "error": error,
            # the source's naive values, marked UTC; the bookmark itself lives in state.json
            "cursor_from": _utc(summary.cursor_from),
            "cursor_to": _utc(summary.cursor_to),
            "kept_noise_tagged": summary.kept_noise_tagged,
        }
        try:
            load.append_run(self.store, record)
        except Exception as exc:  # the run's own outcome matters more than its record
            log.error("could not record the run in etl_runs.parquet: %s", exc)


def _cursor_column(choice: str, info: extract.SourceInfo) -> str:
    if choice == "created_at" and not info.has_created_at:
        raise ConfigError(
            "source.cursor is created_at, but this LiteLLM database has no created_at column "
            '(LiteLLM < 1.99): set cursor = "auto" or "startTime"'
        )
    if choice == "auto":
        return "created_at" if info.has_created_at else "startTime"
    return choice


def _max(current: dt.datetime | None, column: pa.ChunkedArray, ceiling: dt.datetime) -> dt.datetime | None:
    value = pc.max(column).as_py()
    if value is None:
        return current
    value = min(value, ceiling)
    return value if current is None or value > current else current


def _db_now_utc(conn: psycopg.Connection[Any]) -> dt.datetime:
    row = conn.execute("SELECT (now() AT TIME ZONE 'UTC')::timestamp").fetchone()
    assert row is not None
    value: dt.datetime = row[0]
    return value


def _progress_text(rows: int, expected: int, started: dt.datetime) -> str:
    elapsed = max((dt.datetime.now(dt.UTC) - started).total_seconds(), 1e-6)
    share = f" of ~{expected:,} ({min(rows / expected, 1):.0%})" if expected > rows // 2 else ""
    return f"extracting: {rows:,} rows read{share}, {rows / elapsed:,.0f} rows/s"


def _utc(value: dt.datetime | None) -> dt.datetime | None:
    return value.replace(tzinfo=dt.UTC) if value is not None else None


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, UsageError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _ensure_writable(store: Path) -> None:
    try:
        store.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreNotWritable(f"cannot create the store directory {store}: {exc.strerror}") from None
    if not store.is_dir() or not os.access(store, os.W_OK | os.X_OK):
        raise StoreNotWritable(
            f"the store directory {store} is not writable by this user; "
            "check --store (or USAGE_STORE) and its permissions"
        )


@contextmanager
def store_lock(store: Path) -> Iterator[None]:
    """The store's one writer at a time: a run, a rollup rebuild, closing a month
    (ops/statements.py). RunInProgress if another holds it."""
    path = store / LOCK_FILE
    try:
        # never through a symbolic link: the lock is truncated and written, which would
        # overwrite whatever file the link points to
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if path.is_symlink():
            raise StoreNotWritable(
                f"the lock file {path} is a symbolic link; the ETL does not follow it. Delete the link "
                "(the ETL creates the lock file itself), and check that --store is the store"
            ) from None
        raise StoreNotWritable(f"cannot open the lock file {path}: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown"
            raise RunInProgress(
                f"another ETL run ({holder}) is writing the store {store}; this run did nothing "
                "and the next scheduled run catches up. If that run is stuck, stop its process."
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(
            fd, f"pid {os.getpid()}, started {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%S} UTC".encode(), 0
        )
        yield
    finally:
        os.close(fd)  # releases the lock
