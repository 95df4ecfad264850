"""The doctor's checks of what runs leave in the store besides the day files: the run
lock (and whether a run holds it now), the bookmark, the keys and users snapshots, and
the run history with its last run."""

from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contract.errors import StoreCorrupt
from contract.state import read_state
from contract.store import LOCK_FILE, RUNS_FILE, RUNS_SCHEMA, STATE_FILE
from etl import extract
from etl.doctor_report import Check, fail, ok, warn

STUCK_AFTER = dt.timedelta(hours=1)  # a full load of a million rows takes about a minute


@dataclass(frozen=True)
class LockInfo:
    """What `.etl.lock` says and whether a run holds it now."""

    exists: bool
    held: bool = False
    pid: int | None = None
    started: dt.datetime | None = None


_LOCK_TEXT = re.compile(r"pid (\d+), started (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC")


def read_lock(store: Path) -> LockInfo:
    """The run lock is a flock on `.etl.lock`, which stays after every run with the last
    run's pid in it (the kernel drops the lock itself when that process ends). So the file
    existing says nothing; whether a process holds the lock does."""
    path = store / LOCK_FILE
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return LockInfo(exists=False)
    except OSError:
        return LockInfo(exists=True)
    match = _LOCK_TEXT.search(text)
    pid = int(match.group(1)) if match else None
    started = (
        dt.datetime.strptime(match.group(2), "%Y-%m-%d %H:%M:%S").replace(tzinfo=dt.UTC) if match else None
    )
    return LockInfo(exists=True, held=_lock_held(path, pid), pid=pid, started=started)


def _lock_held(path: Path, pid: int | None) -> bool:
    """Whether a process holds the flock, read from /proc/locks (which takes no lock, so a
    run starting now is never turned away by the doctor); without it, whether pid lives."""
    try:
        stat = path.stat()
        table = Path("/proc/locks").read_text(encoding="ascii")
    except OSError:
        return pid is not None and _alive(pid)
    device = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}"
    for line in table.splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] != "FLOCK":  # waiters ("->") and POSIX locks
            continue
        dev, _, inode = fields[5].rpartition(":")
        # The device can read differently on overlay filesystems: the pid confirms it then.
        if inode == str(stat.st_ino) and (dev == device or fields[4] == str(pid)):
            return True
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def check_lock(lock: LockInfo, runs: pa.Table | None, now: dt.datetime) -> Check:
    name = "run lock"
    if not lock.exists:
        return ok(name, "no run has taken it yet")
    since = f", started {lock.started:%Y-%m-%d %H:%M:%S} UTC" if lock.started else ""
    if lock.held:
        if lock.started and now - lock.started > STUCK_AFTER:
            hours = (now - lock.started).total_seconds() / 3600
            return warn(
                name,
                f"a run (pid {lock.pid}{since}) has held it for {hours:.1f} h: stuck?",
                f"if it makes no progress, stop it (kill {lock.pid}); the next run repeats its work",
            )
        return ok(name, f"a run is in progress (pid {lock.pid}{since})")
    last_recorded = _last_started(runs)
    if lock.started and (last_recorded is None or lock.started > last_recorded.replace(microsecond=0)):
        # Every run that gets the lock records itself in etl_runs, good or failed, unless
        # it is killed outright: this one never did, and its pid is gone.
        return warn(
            name,
            f"the run with pid {lock.pid}{since}, ended without recording itself: it was killed "
            "(kill -9, out of memory, a reboot); no lock is held now",
            "nothing to repair, the next run repeats its work; if it recurs, look for the "
            "out-of-memory killer (journalctl -k) and lower source.chunk_rows",
        )
    return ok(name, f"free (the last run, pid {lock.pid}, has finished)" if lock.pid else "free")


def _last_started(runs: pa.Table | None) -> dt.datetime | None:
    if runs is None or runs.num_rows == 0:
        return None
    value: dt.datetime | None = pc.max(runs["started_at"]).as_py()
    return value


def check_state(store: Path, fingerprint: str | None, cursor: str | None) -> Check:
    name = STATE_FILE
    try:
        state = read_state(store)
    except StoreCorrupt as exc:
        return fail(
            name,
            str(exc).split(". Move it away")[0],
            f"move {store / STATE_FILE} away and run again: the ETL re-reads the whole source "
            "and skips every row the store already has",
        )
    if state.cursor is None and state.source is None:
        return ok(name, "no bookmark yet: the next run reads the whole table")
    if fingerprint is not None and state.source is not None and state.source != fingerprint:
        return fail(
            name,
            f"this store belongs to another database: its bookmark is for {state.source}, "
            f"the configured source is {fingerprint}",
            "check --store and --source: give each LiteLLM database its own store; if the database "
            "only moved (new host or name), the next run re-reads it whole once and carries on",
        )
    if state.full_refresh_pending:
        return warn(
            name,
            "a --full-refresh began and has not finished",
            "run `python -m etl run` (or wait for cron): it finishes the refresh",
        )
    at = f"{state.cursor:%Y-%m-%d %H:%M:%S} UTC" if state.cursor else "none"
    detail = f"bookmark {state.cursor_column} {at} for {state.source}"
    if cursor is not None and state.cursor_column not in (None, cursor):
        detail += f"; the cursor is now {cursor}, so the next run re-reads the whole table once"
    return ok(name, detail)


def check_snapshot(store: Path, file: str, schema: pa.Schema) -> Check:
    path = store / file
    if not path.exists():
        return ok(file, "not written yet (runs from the database write it)")
    try:
        table = _read_parquet(path)
    except (OSError, pa.ArrowException) as exc:
        return fail(
            file,
            f"unreadable ({extract.first_line(exc)}); the dashboard cannot load the store",
            f"delete {path}: the next run writes it anew from LiteLLM",
        )
    missing = [n for n in schema.names if n not in table.schema.names]
    if missing:
        return warn(
            file,
            f"lacks column(s) {', '.join(missing)} (an older version wrote it)",
            "nothing to do: the next successful run replaces it",
        )
    return ok(file, f"{table.num_rows:,} rows")


def check_runs_file(store: Path) -> tuple[Check, pa.Table | None]:
    path = store / RUNS_FILE
    if not path.exists():
        return warn(RUNS_FILE, "no run recorded", "run `python -m etl run` (then from cron)"), None
    try:
        table = _read_parquet(path)
    except (OSError, pa.ArrowException) as exc:
        return fail(
            RUNS_FILE,
            f"unreadable ({extract.first_line(exc)}); runs cannot record themselves",
            f"move {path} away: the run history starts again with the next run",
        ), None
    missing = [n for n in RUNS_SCHEMA.names if n not in table.schema.names]
    if missing:
        return fail(
            RUNS_FILE,
            f"lacks column(s) {', '.join(missing)}",
            f"move {path} away: the run history starts again with the next run",
        ), None
    return ok(RUNS_FILE, f"{table.num_rows:,} run(s) recorded"), table


def _read_parquet(path: Path) -> pa.Table:
    with path.open("rb") as handle:
        return pq.ParquetFile(handle).read()


def check_last_run(runs: pa.Table | None, stale_after_minutes: float, now: dt.datetime) -> Check:
    name = "last run"
    if runs is None or runs.num_rows == 0:
        return ok(name, "none recorded")
    last = runs.sort_by([("started_at", "descending")]).slice(0, 1).to_pylist()[0]
    when = f"{last['finished_at']:%Y-%m-%d %H:%M} UTC"
    if last["status"] != "ok":
        return warn(
            name,
            f"the last run ({when}) failed: {last['error']}",
            "fix what the error names, then run `python -m etl run` by hand to confirm",
        )
    succeeded = runs.filter(pc.equal(runs["status"], "ok"))
    last_ok: dt.datetime = pc.max(succeeded["finished_at"]).as_py()
    age_minutes = (now - last_ok).total_seconds() / 60
    if age_minutes > stale_after_minutes:
        return warn(
            name,
            f"the last run succeeded {age_minutes / 60:.1f} h ago ({when}); the dashboard calls "
            f"data older than {stale_after_minutes:g} minutes stale",
            "is the cron job running? check its log (README: Keeping the store up to date)",
        )
    return ok(name, f"succeeded {when}: {last['rows_written']:,} rows written")
