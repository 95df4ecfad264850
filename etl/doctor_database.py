"""The doctor's checks of LiteLLM's database: it answers, its spend-log table is there
with a schema the ETL reads, and this user may read what a run reads. A read-only
connection that only looks at the catalog and at `_prisma_migrations`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql
from sqlalchemy.engine import URL

from etl import extract
from etl.doctor_report import Check, fail, ok, warn
from etl.errors import SourceTableMissing, SourceUnreachable
from etl.run import DEFAULT_OVERLAP_MINUTES, _cursor_column
from settings.config import Config
from settings.errors import ConfigError

# The tables a run reads: the spend logs, and the keys / users snapshots (keys join the
# budget table for keys on a budget tier).
READ_TABLES = ("LiteLLM_SpendLogs", "LiteLLM_VerificationToken", "LiteLLM_UserTable", "LiteLLM_BudgetTable")
# Columns LiteLLM added after its baseline migration that the ETL uses where present.
LATER_COLUMNS = ("status", "session_id", "request_duration_ms", "created_at")
CONNECT_TIMEOUT_S = 5
STATEMENT_TIMEOUT = "15s"  # catalog look-ups only: anything slower means a stuck database


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
