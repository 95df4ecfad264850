"""The LiteLLM database: its URL, a read-only connection to it, and its catalog.

`parse_source_url` takes LiteLLM's DATABASE_URL as written (Prisma's options included) or
refuses it with a message; `connect` opens a read-only session that gives up instead of
hanging; `inspect_source` reads what the spend-log table offers and refuses one the ETL
cannot read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg.conninfo import make_conninfo
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from etl.errors import SourceDataError, SourceTableMissing, SourceUnreachable
from etl.extract_sql import (
    _JSON_TYPES,
    _LITELLM_TYPES,
    _PLAIN_COLUMNS,
    _TAG_TYPES,
    _TIME_TYPES,
    REQUIRED_COLUMNS,
    SPEND_LOGS,
    SourceInfo,
)
from settings.errors import ConfigError

# --- connecting ---------------------------------------------------------------------

# Prisma's URL options, which LiteLLM's DATABASE_URL may carry and libpq rejects.
_PRISMA_ONLY = {"connection_limit", "pool_timeout", "pgbouncer", "socket_timeout", "statement_cache_size"}
_LIBPQ_OPTIONS = frozenset(o.keyword.decode() for o in psycopg.pq.Conninfo.get_defaults())


def parse_source_url(url: str) -> URL:
    """Parse a SQLAlchemy / libpq / Prisma PostgreSQL URL; reject anything else clearly."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(
            "--source is not a database URL; expected postgresql://user:password@host:5432/litellm"
        ) from None
    except ValueError:  # SQLAlchemy's int() of whatever follows the host's last ":"
        raise ConfigError(_address_problem(url)) from None
    backend, _, driver = parsed.drivername.partition("+")
    if backend not in ("postgresql", "postgres") or driver not in ("", "psycopg"):
        raise ConfigError(
            f"--source must be a PostgreSQL URL (postgresql:// or postgresql+psycopg://), "
            f"not {parsed.drivername}://"
        )
    if parsed.host and "@" in parsed.host:
        # an unencoded "@" in the password: part of it would be taken for the host
        raise ConfigError(
            "--source has an unencoded '@' (in the password?): write it as %40, "
            "e.g. postgresql://user:p%40ss@host:5432/litellm"
        )
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise ConfigError(f"--source has port {parsed.port}; a port is a number from 1 to 65535")
    _check_options(parsed)
    return parsed


def _address_problem(url: str) -> str:
    """Which part of host:port is wrong, without echoing the URL (it may hold a password)."""
    try:
        port = urlsplit(url).port
    except ValueError as exc:
        if "IPv6" in str(exc):
            return (
                "--source has a malformed IPv6 host: write it in brackets, "
                "e.g. postgresql://user:password@[::1]:5432/litellm"
            )
        if "range" in str(exc):
            return "--source has a port out of range; a port is a number from 1 to 65535"
        return "--source has a port that is not a number; e.g. postgresql://user:password@host:5432/litellm"
    return (
        f"--source has a malformed host or port ({port}); e.g. postgresql://user:password@host:5432/litellm"
    )


def _check_options(url: URL) -> None:
    """libpq rejects an option it does not know when connecting, in a message that a
    cron log would show without saying it came from the URL."""
    unknown = sorted(set(url.query) - _LIBPQ_OPTIONS - _PRISMA_ONLY - {"schema"})
    if unknown:
        raise ConfigError(
            f"--source has unknown option(s) {', '.join(unknown)} after '?': remove them or correct "
            "their spelling (PostgreSQL's own, e.g. sslmode, connect_timeout, options; and schema)"
        )


def describe_source(url: URL) -> str:
    """user@host:port/database: no password, no query options (which may carry one)."""
    user = f"{url.username}@" if url.username else ""
    port = f":{url.port}" if url.port else ""
    host = url.host or "localhost"
    host = f"[{host}]" if ":" in host else host  # IPv6, written as a URL writes it
    return f"postgresql://{user}{host}{port}/{url.database or ''}"


def source_fingerprint(url: URL) -> str:
    """Which database this is, independent of credentials: the bookmark belongs to it."""
    return f"{url.host or 'localhost'}:{url.port or 5432}/{url.database or ''}"


# A FETCH that takes this long means something is stuck; so does a silent network.
STATEMENT_TIMEOUT_MS = 10 * 60 * 1000
_SESSION = {
    "connect_timeout": "10",
    "application_name": "litellm-usage-etl",
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",
}


def connect(url: URL) -> psycopg.Connection[Any]:
    """A read-only connection to the LiteLLM database that gives up instead of hanging."""
    query = {k: v if isinstance(v, str) else v[-1] for k, v in url.query.items() if k not in _PRISMA_ONLY}
    options = [query.pop("options")] if "options" in query else []
    options.append(f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")
    if schema := query.pop("schema", None):
        options.append(f"-c search_path={schema}")
    base = url.set(drivername="postgresql", query={}).render_as_string(hide_password=False)
    try:
        conninfo = make_conninfo(base, **{**_SESSION, **query, "options": " ".join(options)})
    except psycopg.ProgrammingError as exc:
        # libpq's message may quote the option's value, which may be a password
        raise ConfigError(
            f"--source has an option libpq cannot use ({type(exc).__name__}): correct the options after '?'"
        ) from None
    try:
        conn = psycopg.connect(conninfo)
    except psycopg.Error as exc:
        raise SourceUnreachable(
            f"cannot connect to the LiteLLM database {describe_source(url)}: {first_line(exc)}. "
            "Is PostgreSQL running, and is --source (or LITELLM_DATABASE_URL) right?"
        ) from None
    conn.read_only = True
    return conn


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --- the catalog -----------------------------------------------------------------------


def inspect_source(conn: psycopg.Connection[Any], database: str) -> SourceInfo:
    types = _column_types(conn, SPEND_LOGS)
    columns = frozenset(types)
    if not columns:
        raise SourceTableMissing(
            f"no table {SPEND_LOGS} in database {database}: is --source the LiteLLM database "
            "(the one in LiteLLM's DATABASE_URL), and has the proxy run its migrations?"
        )
    missing = REQUIRED_COLUMNS - columns
    if missing:
        raise SourceTableMissing(
            f"table {SPEND_LOGS} in database {database} lacks column(s) {', '.join(sorted(missing))}: "
            "it is not a LiteLLM spend-log table this ETL understands"
        )
    _check_types(types, database)
    row = conn.execute(
        "SELECT c.reltuples, EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a "
        "ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
        "WHERE i.indrelid = c.oid AND a.attname = 'created_at'), "
        "EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a "
        "ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
        "WHERE i.indrelid = c.oid AND i.indisunique AND i.indnkeyatts = 1 AND i.indpred IS NULL "
        "AND a.attname = 'request_id') "
        "FROM pg_class c WHERE c.oid = to_regclass(%s)",
        [_regclass(SPEND_LOGS)],
    ).fetchone()
    reltuples, indexed, unique = row if row else (0, False, False)
    return SourceInfo(
        columns=columns,
        created_at_indexed=bool(indexed),
        estimated_rows=max(int(reltuples or 0), 0),
        types=tuple(sorted(types.items())),
        request_id_unique=bool(unique),
    )


def _check_types(types: Mapping[str, str], database: str) -> None:
    expected = {"metadata": _JSON_TYPES, "request_tags": _TAG_TYPES} | {
        column: _TIME_TYPES for _, column, _, pg_type in _PLAIN_COLUMNS if pg_type == "timestamp"
    }
    for column, allowed in expected.items():
        if column in types and types[column] not in allowed:
            raise SourceDataError(
                f'column "{column}" of {SPEND_LOGS} in database {database} has type {types[column]}, '
                f"which the ETL cannot read (LiteLLM creates it as {_LITELLM_TYPES[column]}): "
                f"point --source at LiteLLM's own database, or convert the column to {_LITELLM_TYPES[column]}"
            )


def _columns(conn: psycopg.Connection[Any], table: str) -> frozenset[str]:
    """The table's columns (in the connection's search_path); empty if there is no table."""
    return frozenset(_column_types(conn, table))


def _column_types(conn: psycopg.Connection[Any], table: str) -> dict[str, str]:
    """Each column's type name (a domain's base type): int4, jsonb, _text, timestamp, ..."""
    rows = conn.execute(
        "SELECT a.attname, t.typname FROM pg_attribute a JOIN pg_type d ON d.oid = a.atttypid "
        "JOIN pg_type t ON t.oid = CASE d.typtype WHEN 'd' THEN d.typbasetype ELSE d.oid END "
        "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped",
        [_regclass(table)],
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def _regclass(table: str) -> str:
    return '"' + table.replace('"', '""') + '"'
