"""The doctor's checks of the store's files: the directory, the day files (readable, each
request once), their rollups, and what should not be there (temporary, unexpected or
set-aside files, a dead run's staging). `check_store` runs every check of the store:
these and those of doctor_runs.py."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contract.store import (
    DAY_FILE,
    DEMO_FILE,
    KEYS_FILE,
    KEYS_SCHEMA,
    REQUESTS_FILE_SCHEMA,
    SET_ASIDE,
    STAGING_DIR,
    TMP_MARK,
    USERS_FILE,
    USERS_SCHEMA,
    older_layout,
    requests_dir,
)
from etl import extract, rollup
from etl.doctor_report import Check, _names, fail, ok, warn
from etl.doctor_runs import (
    LockInfo,
    check_last_run,
    check_lock,
    check_runs_file,
    check_snapshot,
    check_state,
    read_lock,
)
from settings.config import DashboardSettings


def check_store(
    store: Path,
    fingerprint: str | None,
    cursor: str | None,
    dashboard: DashboardSettings,
    now: dt.datetime,
) -> list[Check]:
    directory = check_directory(store)
    if not store.is_dir():  # nothing more to look at (and nothing may be created)
        return [directory]
    lock = read_lock(store)
    runs_check, runs = check_runs_file(store)
    return [
        directory,
        check_not_demo(store),
        *check_day_files(store),
        check_rollups(store, dashboard.timezone),
        check_temporary_files(store, lock),
        check_unexpected_files(store),
        check_set_aside(store),
        check_staging(store, lock),
        check_lock(lock, runs, now),
        check_state(store, fingerprint, cursor),
        check_snapshot(store, KEYS_FILE, KEYS_SCHEMA),
        check_snapshot(store, USERS_FILE, USERS_SCHEMA),
        runs_check,
        check_last_run(runs, dashboard.stale_after_minutes, now),
    ]


def check_not_demo(store: Path) -> Check:
    """A demo store (etl/demo.py) holds simulated data; `run` refuses to write into it."""
    if (store / DEMO_FILE).is_file():
        return fail(
            "demo store",
            f"{store} is a demo store (simulated data, {DEMO_FILE}); the ETL will not write into it",
            "give the real store its own directory (--store or USAGE_STORE)",
        )
    return ok("demo store", "not a demo: real data only")


def check_directory(store: Path) -> Check:
    """Exists and is writable, or can be created: its nearest existing parent is writable."""
    name = "store directory"
    if store.is_dir():
        if not os.access(store, os.W_OK | os.X_OK):
            return fail(name, f"{store} is not writable by this user", _chown_fix(store))
        return ok(name, f"{store.resolve()} exists and is writable")
    store = store.absolute()
    if store.exists():
        return fail(name, f"{store} is a file, not a directory", "choose another --store (or USAGE_STORE)")
    parent = store.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return fail(
            name, f"{store} cannot be created: {parent} is a file", "choose another --store (or USAGE_STORE)"
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        return fail(name, f"{store} cannot be created: {parent} is not writable", _chown_fix(store))
    return warn(
        name,
        f"{store} does not exist yet (it can be created)",
        "run `python -m etl run` once: it creates the store and fills it",
    )


def _chown_fix(store: Path) -> str:
    return f"as root: mkdir -p {store} && chown ETL_USER {store} (or choose another --store)"


def day_files(store: Path) -> list[Path]:
    """What readers read: exactly `date=*/part-0.parquet`, as queries/snapshot.py globs."""
    return sorted(requests_dir(store).glob(f"date=*/{DAY_FILE}"))


def check_day_files(store: Path) -> list[Check]:
    """Every day file readable with this version's columns; no request_id stored twice."""
    ids: list[pa.Table] = []
    broken: list[str] = []
    other_schema: list[str] = []
    for path in day_files(store):
        day = path.parent.name.removeprefix("date=")
        try:
            table = _read_ids(path)
        except _OtherSchema:
            other_schema.append(day)
            continue
        except (OSError, pa.ArrowException) as exc:
            broken.append(f"{day} ({extract.first_line(exc)})")
            continue
        ids.append(table.append_column("day", pa.array([day] * table.num_rows, pa.string())))
    return [_day_files_check(store, len(ids), broken, other_schema), _duplicates_check(ids)]


class _OtherSchema(Exception):
    """A day file whose columns are not the ones this version writes."""


def _read_ids(path: Path) -> pa.Table:
    """Decode the whole file (a damaged page shows up only when read), keep request_id."""
    with path.open("rb") as handle:
        parquet = pq.ParquetFile(handle)
        if parquet.schema_arrow != REQUESTS_FILE_SCHEMA and not older_layout(parquet.schema_arrow):
            raise _OtherSchema
        chunks = [batch.column("request_id") for batch in parquet.iter_batches(batch_size=65_536)]
    return pa.table({"request_id": pa.chunked_array(chunks, pa.string())})


def _day_files_check(store: Path, good: int, broken: list[str], other_schema: list[str]) -> Check:
    name = "day files"
    if broken:
        return fail(
            name,
            f"unreadable: {_names(broken)}",
            f"move each named requests/date=DAY/{DAY_FILE} out of {store}, then run "
            "`python -m etl run --full-refresh` to rebuild those days from LiteLLM (requests LiteLLM "
            "has deleted since are lost with the file)",
        )
    if other_schema:
        return fail(
            name,
            f"not the columns this version writes: {_names(other_schema)}",
            "build a new store: `python -m etl run --full-refresh --store NEW_DIR` into an empty "
            "directory, then point the dashboard at it",
        )
    if not good:
        return ok(name, "no requests stored yet")
    return ok(name, f"{good} day file(s), all readable with the expected columns")


def _duplicates_check(ids: list[pa.Table]) -> Check:
    name = "request ids"
    if not ids:
        return ok(name, "nothing stored yet")
    table = pa.concat_tables(ids)
    counts = table.group_by("request_id").aggregate([("day", "count")])
    repeated = counts.filter(pc.greater(counts["day_count"], 1))
    if repeated.num_rows == 0:
        return ok(name, f"{table.num_rows:,} requests, each stored once")
    extra = int(pc.sum(repeated["day_count"]).as_py()) - repeated.num_rows
    rows = table.filter(pc.is_in(table["request_id"], value_set=repeated["request_id"]))
    days = sorted(pc.unique(rows["day"]).to_pylist())
    example = repeated["request_id"][0].as_py()
    return fail(
        name,
        f"{repeated.num_rows:,} request_id(s) stored more than once ({extra:,} extra copies, "
        f"counted twice on the page) in {_names(days)}; e.g. {example}",
        "the ETL never writes these: stop whatever else writes into the store, then run "
        "`python -m etl run --full-refresh`, which stores each request LiteLLM still has once; "
        "a copy of a request LiteLLM has deleted, or under another day, must be removed by hand",
    )


def check_rollups(store: Path, zone: str) -> Check:
    name = "rollups"
    days = len(day_files(store))
    behind = rollup.missing(store, zone)
    if not behind:
        return ok(name, f"every day file ({days:,}) has its rollup")
    return warn(
        name,
        f"{len(behind):,} of {days:,} days have no rollup for their current file, e.g. {behind[0]} "
        "(pages sum those days from their files, slower, with the same numbers)",
        "nothing to repair: the next run builds them (or python -m etl rollup now)",
    )


def check_temporary_files(store: Path, lock: LockInfo) -> Check:
    name = "temporary files"
    found = sorted(p for p in store.rglob(f"*{TMP_MARK}*") if p.is_file())
    if not found:
        return ok(name, "none")
    listed = _names([str(p.relative_to(store)) for p in found])
    if lock.held:
        return ok(name, f"{listed}: being written by the running run (pid {lock.pid})")
    return warn(
        name,
        f"left by a run that was killed: {listed} (readers ignore them)",
        f"delete them (find {store} -name '*{TMP_MARK}*' -delete); the next run also deletes them",
    )


def check_unexpected_files(store: Path) -> Check:
    """Entries under requests/ readers skip: not a day file, not the ETL's temporary file."""
    name = "unexpected files"
    folder = requests_dir(store)
    found: list[str] = []
    if folder.is_dir():
        for entry in sorted(folder.iterdir()):
            if not (entry.is_dir() and _is_day_dir(entry.name)):
                found.append(str(entry.relative_to(store)))
                continue
            found += [
                str(p.relative_to(store))
                for p in sorted(entry.iterdir())
                if p.name != DAY_FILE and TMP_MARK not in p.name and SET_ASIDE not in p.name
            ]
    if not found:
        return ok(name, "none under requests/")
    return warn(
        name,
        f"not written by the ETL, and ignored by the dashboard: {_names(found)}",
        "move them out of the store (only the ETL writes in requests/)",
    )


def check_set_aside(store: Path) -> Check:
    """Day files the ETL found unreadable and renamed (etl/load.py): their day was written
    anew from later rows, so its earlier requests are missing until restored."""
    name = "set-aside day files"
    found = sorted(
        str(p.relative_to(store)) for p in requests_dir(store).glob(f"date=*/{DAY_FILE}{SET_ASIDE}*")
    )
    if not found:
        return ok(name, "none")
    return warn(
        name,
        f"unreadable when the ETL last wrote their day, kept beside it: {_names(found)}",
        "run `python -m etl run --full-refresh` to restore the requests LiteLLM still holds; "
        "repair the file from a backup if you have one, then remove it",
    )


def _is_day_dir(name: str) -> bool:
    try:
        dt.date.fromisoformat(name.removeprefix("date="))
    except ValueError:
        return False
    return name.startswith("date=")


def check_staging(store: Path, lock: LockInfo) -> Check:
    name = "staging"
    staging = store / STAGING_DIR
    if not staging.exists():
        return ok(name, f"no {STAGING_DIR}/")
    if lock.held:
        return ok(name, f"{STAGING_DIR}/ belongs to the running run (pid {lock.pid})")
    size = sum(p.stat().st_size for p in staging.rglob("*") if p.is_file())
    return warn(
        name,
        f"{STAGING_DIR}/ ({size / 1e6:.1f} MB) left by a run that died; nothing visible was changed",
        f"nothing to repair: the next run discards it (or rm -r {staging})",
    )
