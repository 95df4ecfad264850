"""`python -m etl doctor`: read-only checks of an installation, each with what to do.

Every check returns `Check` records (data, so the tests and any other caller can look at
them); `report` turns them into the lines a person reads. Nothing here writes: not the
store (not even to create its directory), not the database (a read-only connection that
only looks at the catalog and at `_prisma_migrations`).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import duckdb
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from psycopg import sql
from sqlalchemy.engine import URL

from contract.errors import StoreCorrupt
from contract.state import read_state
from contract.store import (
    DAY_FILE,
    DEMO_FILE,
    KEYS_FILE,
    KEYS_SCHEMA,
    LOCK_FILE,
    REQUESTS_FILE_SCHEMA,
    RUNS_FILE,
    RUNS_SCHEMA,
    SET_ASIDE,
    STAGING_DIR,
    STATE_FILE,
    TMP_MARK,
    USERS_FILE,
    USERS_SCHEMA,
    older_layout,
    requests_dir,
)
from etl import extract, rollup
from etl.errors import SourceTableMissing, SourceUnreachable
from etl.run import DEFAULT_OVERLAP_MINUTES, _cursor_column
from settings.config import DEFAULT_STORE, Config, DashboardSettings, SourceSettings, load_config
from settings.errors import ConfigError
from settings.toml_file import read_toml

Status = Literal["OK", "WARN", "FAIL"]
EXIT_OK = 0
EXIT_FIX_NEEDED = 3

# The tables a run reads: the spend logs, and the keys / users snapshots (keys join the
# budget table for keys on a budget tier).
READ_TABLES = ("LiteLLM_SpendLogs", "LiteLLM_VerificationToken", "LiteLLM_UserTable", "LiteLLM_BudgetTable")
# Columns LiteLLM added after its baseline migration that the ETL uses where present.
LATER_COLUMNS = ("status", "session_id", "request_duration_ms", "created_at")
CONNECT_TIMEOUT_S = 5
STATEMENT_TIMEOUT = "15s"  # catalog look-ups only: anything slower means a stuck database
STUCK_AFTER = dt.timedelta(hours=1)  # a full load of a million rows takes about a minute
MAX_NAMED = 5  # files or days named in one line before "and N more"


@dataclass(frozen=True)
class Check:
    """One line of the report; `fix` says what to do, for anything not OK."""

    name: str
    status: Status
    detail: str
    fix: str | None = None


def ok(name: str, detail: str) -> Check:
    return Check(name, "OK", detail)


def warn(name: str, detail: str, fix: str) -> Check:
    return Check(name, "WARN", detail, fix)


def fail(name: str, detail: str, fix: str) -> Check:
    return Check(name, "FAIL", detail, fix)


# --- the whole examination ------------------------------------------------------------


def diagnose(
    *,
    config_file: str | Path | None = None,
    source: str | None = None,
    store: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    now: dt.datetime | None = None,
) -> list[Check]:
    """Every check, in the order a person fixes things: configuration, database, store."""
    env = os.environ if env is None else env
    now = now or dt.datetime.now(dt.UTC)
    checks, config = check_config(config_file, source, store, env)
    db_checks, url, cursor = check_database(config, _source_origin(source, env))
    checks += db_checks
    fingerprint = extract.source_fingerprint(url) if url is not None else None
    checks += check_store(config.store, fingerprint, cursor, config.dashboard, now)
    return checks


def exit_code(checks: Iterable[Check]) -> int:
    return EXIT_FIX_NEEDED if any(c.status == "FAIL" for c in checks) else EXIT_OK


def format_check(check: Check) -> str:
    line = f"{check.status:<4}  {check.name:<16}  {check.detail}"
    return f"{line} -> fix: {check.fix}" if check.fix else line


def report(checks: Sequence[Check]) -> list[str]:
    """The lines to print: one per check, then a summary."""
    counts = {s: sum(c.status == s for c in checks) for s in ("OK", "WARN", "FAIL")}
    if counts["FAIL"]:
        summary = "something must be fixed: see the FAIL lines, then run doctor again"
    elif counts["WARN"]:
        summary = "nothing must be fixed; the WARN lines are worth a look"
    else:
        summary = "all good"
    tally = f"{counts['OK']} OK, {counts['WARN']} WARN, {counts['FAIL']} FAIL"
    return [*(format_check(c) for c in checks), f"doctor: {tally}: {summary}"]


# --- configuration -----------------------------------------------------------------------


def check_config(
    config_file: str | Path | None, source: str | None, store: str | Path | None, env: Mapping[str, str]
) -> tuple[list[Check], Config]:
    """The file, the time zone and the source; the configuration the other checks use."""
    path = config_file or env.get("USAGE_CONFIG") or None
    origin = _source_origin(source, env)
    try:
        config = load_config(path, source=source, store=store, env=env)
    except ConfigError as exc:
        # Go on with the defaults so the database and the store get checked all the same.
        fallback = _fallback_config(path, source, store, env)
        detail = f"{exc} (the checks below use the default settings instead)"
        fix = "correct the setting named (the README's Configuration section lists them all)"
        if str(exc).startswith("configuration file") and "does not exist" in str(exc):
            fix = "pass --config with the right path, or unset USAGE_CONFIG to run without a file"
        return [fail("configuration", detail, fix), check_source(fallback, origin)], fallback
    checks = [_config_ok(config), check_timezone(config.dashboard.timezone), check_source(config, origin)]
    return checks, config


def _config_ok(config: Config) -> Check:
    if config.path is None:
        return ok("configuration", f"no file: every setting has its default; store {config.store}")
    rules = f"{len(config.nodes)} node name(s), {len(config.clients)} client rule(s)"
    return ok("configuration", f"{config.path} is valid: {rules}; store {config.store}")


def _fallback_config(
    path: str | Path | None, source: str | None, store: str | Path | None, env: Mapping[str, str]
) -> Config:
    """The defaults in place of the broken file (but its store, if it names one), with the
    source and store from the flags and environment as load_config takes them."""
    url = source or env.get("LITELLM_DATABASE_URL") or env.get("DATABASE_URL") or None
    folder = store or env.get("USAGE_STORE") or _store_in(path) or DEFAULT_STORE
    return Config(store=Path(folder), source=SourceSettings(url=url))


def _store_in(path: str | Path | None) -> Path | None:
    if not path:
        return None
    try:
        value = read_toml(Path(path), "configuration file").get("store")
    except ConfigError:
        return None
    if not isinstance(value, str) or not value:
        return None
    return Path(value) if Path(value).is_absolute() else Path(path).parent / value


def check_timezone(name: str) -> Check:
    """load_config has checked Python knows the zone; the charts are bucketed by DuckDB."""
    with duckdb.connect() as con:
        known = con.execute("SELECT count(*) FROM pg_timezone_names() WHERE name = ?", [name]).fetchone()
    if not known or not known[0]:
        return warn(
            "time zone",
            f"{name} is known to Python but not to DuckDB, which groups the charts by time",
            "choose another spelling of the zone for dashboard.timezone (or USAGE_TIMEZONE)",
        )
    return ok("time zone", name)


def _source_origin(flag: str | None, env: Mapping[str, str]) -> str:
    """Where the source URL came from, to name it in a fix."""
    if flag:
        return "--source"
    return "LITELLM_DATABASE_URL" if env.get("LITELLM_DATABASE_URL") else "DATABASE_URL"


def check_source(config: Config, origin: str) -> Check:
    if not config.source.url:
        return fail(
            "source",
            "no LiteLLM database configured",
            "pass --source postgresql://user:password@host:5432/litellm or set LITELLM_DATABASE_URL "
            "(the ETL's environment file in the README)",
        )
    try:
        url = extract.parse_source_url(config.source.url)
    except ConfigError as exc:
        return fail("source", str(exc), f"correct {origin}")
    return ok("source", f"{extract.describe_source(url)} (from {origin})")


# --- the database ------------------------------------------------------------------------


def check_database(config: Config, origin: str) -> tuple[list[Check], URL | None, str | None]:
    """Reachable, LiteLLM's table there, its schema, the privileges a run needs.

    Returns the checks, the parsed URL (for the store's bookmark) and the cursor column a
    run would use (None when the database did not say).
    """
    if not config.source.url:
        return [], None, None
    try:
        url = extract.parse_source_url(config.source.url)
    except ConfigError:
        return [], None, None  # check_source has said why
    try:
        conn = _connect(url)
    except SourceUnreachable as exc:
        # the message's own closing question is what the fix answers
        detail = str(exc).split(". Is PostgreSQL running")[0]
        return [fail("database", detail, _unreachable_fix(origin))], url, None
    try:
        with conn:
            conn.execute(sql.SQL("SET statement_timeout = {}").format(sql.Literal(STATEMENT_TIMEOUT)))
            checks, cursor = _inspect(conn, url, config)
    except psycopg.Error as exc:
        checks = [
            fail(
                "database",
                f"a look-up in {extract.describe_source(url)} failed: {extract.first_line(exc)}",
                "check the database's log; run doctor again once it answers",
            )
        ]
        cursor = None
    return checks, url, cursor


def _unreachable_fix(origin: str) -> str:
    return (
        f"start PostgreSQL, or correct {origin} (host, port, database, user, password); "
        "from this machine, `pg_isready -h HOST -p PORT` tells whether the server answers"
    )


def _connect(url: URL) -> psycopg.Connection[Any]:
    """extract.connect, as a run connects, but quick to give up and named in pg_stat_activity
    as the doctor (options in the URL's query win over extract's defaults)."""
    quick = url.update_query_dict(
        {"connect_timeout": str(CONNECT_TIMEOUT_S), "application_name": "litellm-usage-doctor"}
    )
    return extract.connect(quick)


def _inspect(conn: psycopg.Connection[Any], url: URL, config: Config) -> tuple[list[Check], str | None]:
    version = str(_one(conn, "SHOW server_version")).split()[0]
    role = str(_one(conn, "SELECT current_user"))
    checks = [ok("database", f"answers: PostgreSQL {version}, connected as {role}")]
    database = url.database or "?"
    if not _one(conn, "SELECT to_regclass(%s) IS NOT NULL", [f'"{extract.SPEND_LOGS}"']):
        path = _one(conn, "SHOW search_path")
        detail = f"no table {extract.SPEND_LOGS} in database {database} (schema search path: {path})"
        fix = (
            "wrong database? point --source at the one in LiteLLM's DATABASE_URL (with its ?schema= "
            "if it has one); if it is that one, start the LiteLLM proxy once so that it creates its tables"
        )
        return [*checks, fail("spend-log table", detail, fix)], None
    try:
        info = extract.inspect_source(conn, database)
    except SourceTableMissing as exc:
        fix = "point --source at LiteLLM's own database: this table is not LiteLLM's spend log"
        return [*checks, fail("spend-log table", str(exc), fix)], None
    # PostgreSQL's estimate, unknown (0 here) until the table is first analyzed
    size = f": about {info.estimated_rows:,} rows" if info.estimated_rows else ""
    checks.append(ok("spend-log table", f"{extract.SPEND_LOGS} is there{size}"))
    schema_check, cursor = _check_schema(conn, info, config)
    return [*checks, schema_check, _check_privileges(conn, role)], cursor


def _one(conn: psycopg.Connection[Any], query: str, params: Sequence[Any] = ()) -> Any:
    row = conn.execute(query, params).fetchone()
    return row[0] if row else None


def _check_schema(
    conn: psycopg.Connection[Any], info: extract.SourceInfo, config: Config
) -> tuple[Check, str | None]:
    """LiteLLM's newest migration, the later columns present, and the cursor a run uses."""
    present = [c for c in LATER_COLUMNS if c in info.columns]
    missing = [c for c in LATER_COLUMNS if c not in info.columns]
    parts = [_migration_text(conn)]
    if not missing:
        parts.append(f"has {', '.join(present)}")
    else:
        has = f"has {', '.join(present)}, " if present else ""
        parts.append(f"{has}without {', '.join(missing)} (an older LiteLLM: read as empty)")
    try:
        cursor = _cursor_column(config.source.cursor, info)
    except ConfigError as exc:
        return fail("schema", "; ".join(parts) + f"; {exc}", 'set source.cursor = "auto"'), None
    overlap = config.source.overlap_minutes
    overlap = DEFAULT_OVERLAP_MINUTES[cursor] if overlap is None else overlap
    parts.append(f"runs use cursor {cursor} with a {overlap:g}-minute overlap")
    return ok("schema", "; ".join(parts)), cursor


def _migration_text(conn: psycopg.Connection[Any]) -> str:
    """LiteLLM's newest migration, from Prisma's record of them, where this user may read it."""
    # has_table_privilege on a NULL oid (no such table) is NULL rather than an error,
    # which would abort the transaction the other look-ups share.
    exists, readable = conn.execute(
        "SELECT to_regclass('\"_prisma_migrations\"') IS NOT NULL, "
        "has_table_privilege(to_regclass('\"_prisma_migrations\"')::oid, 'SELECT')"
    ).fetchone() or (False, None)
    if not exists:
        return "no _prisma_migrations table"
    if not readable:
        return "_prisma_migrations is not readable by this user"
    # Migration names start with their timestamp, so the greatest name is the newest.
    value = _one(
        conn,
        'SELECT max(migration_name) FROM "_prisma_migrations" '
        "WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
    )
    return f"newest migration {value}" if value else "no finished migration in _prisma_migrations"


def _check_privileges(conn: psycopg.Connection[Any], role: str) -> Check:
    # one query for every table (see _migration_text on has_table_privilege and NULL)
    rows = conn.execute(
        "SELECT t, to_regclass(format('%%I', t)) IS NOT NULL, "
        "has_table_privilege(to_regclass(format('%%I', t))::oid, 'SELECT') "
        "FROM unnest(%s::text[]) AS t",
        [list(READ_TABLES)],
    ).fetchall()
    absent = [t for t, exists, _ in rows if not exists]
    refused = [t for t, exists, allowed in rows if exists and not allowed]
    if refused:
        # quote_ident quotes only where SQL needs it, so the GRANT reads as a person types it
        schema, grantee = conn.execute(
            "SELECT quote_ident(n.nspname), quote_ident(current_user) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(%s)",
            [f'"{extract.SPEND_LOGS}"'],
        ).fetchone() or ("public", role)
        return fail(
            "privileges",
            f"user {role} may not SELECT from {', '.join(refused)}",
            f"as the owner of LiteLLM's tables, run: GRANT SELECT ON ALL TABLES IN SCHEMA {schema} "
            f"TO {grantee}",
        )
    if absent:
        return warn(
            "privileges",
            f"SELECT granted; no table {', '.join(absent)} in this database, so the keys or users "
            "snapshot stays empty",
            "nothing to do for an older LiteLLM; otherwise check that --source is LiteLLM's database",
        )
    return ok("privileges", f"user {role} may SELECT from {', '.join(READ_TABLES)}")


# --- the store -------------------------------------------------------------------------


@dataclass(frozen=True)
class LockInfo:
    """What `.etl.lock` says and whether a run holds it now."""

    exists: bool
    held: bool = False
    pid: int | None = None
    started: dt.datetime | None = None


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


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    return shown if len(items) <= MAX_NAMED else f"{shown} and {len(items) - MAX_NAMED} more"
