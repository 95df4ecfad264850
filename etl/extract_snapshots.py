"""Copies of LiteLLM's key and user tables (`read_keys`, `read_users`) as the store's
`KEYS_SCHEMA` and `USERS_SCHEMA`: the columns read, their SELECT, and the values that
could not be read, counted rather than raised."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import psycopg
import pyarrow as pa
from psycopg import sql

from contract.store import KEYS_SCHEMA, USERS_SCHEMA
from etl.extract_source import _column_types, _columns
from etl.extract_sql import _TIME_TYPES, _timestamp

# (store column, source expression or column, PostgreSQL type); budget-table values fill
# in where a key carries a budget_id instead of its own limits.
_KEY_COLUMNS: list[tuple[str, str, str]] = [
    ("api_key_hash", "token", "text"),
    ("key_name", "key_name", "text"),
    ("key_alias", "key_alias", "text"),
    ("user_id", "user_id", "text"),
    ("team_id", "team_id", "text"),
    ("spend", "spend", "float8"),
    ("max_budget", "max_budget", "float8"),
    ("budget_duration", "budget_duration", "text"),
    ("budget_reset_at", "budget_reset_at", "timestamp"),
    ("tpm_limit", "tpm_limit", "int8"),
    ("rpm_limit", "rpm_limit", "int8"),
    ("expires", "expires", "timestamp"),
    ("blocked", "blocked", "bool"),
    ("created_at", "created_at", "timestamp"),
    ("last_active", "last_active", "timestamp"),
]
_KEY_BUDGET_FALLBACK = ("max_budget", "budget_duration", "tpm_limit", "rpm_limit")
# The user table's password, email-verification and SSO fields are never read.
_USER_COLUMNS: list[tuple[str, str, str]] = [
    ("user_id", "user_id", "text"),
    ("user_alias", "user_alias", "text"),
    ("user_email", "user_email", "text"),
    ("user_role", "user_role", "text"),
    ("spend", "spend", "float8"),
    ("max_budget", "max_budget", "float8"),
    ("budget_duration", "budget_duration", "text"),
    ("budget_reset_at", "budget_reset_at", "timestamp"),
    ("tpm_limit", "tpm_limit", "int8"),
    ("rpm_limit", "rpm_limit", "int8"),
    ("created_at", "created_at", "timestamp"),
]


KEYS_TABLE = "LiteLLM_VerificationToken"
USERS_TABLE = "LiteLLM_UserTable"
# What a key's expiry before year 1 (-infinity, a BC date) is read as: a time long past,
# since such a key has expired (fail closed); one that pandas and every time zone can hold
EXPIRED_LONG_AGO = dt.datetime(1970, 1, 1)


@dataclass(frozen=True)
class Snapshot:
    """A copy of LiteLLM's key or user table, and how many of its values could not be read
    (a time out of Python's range), per "table.column": read as NULL, never an error."""

    table: pa.Table
    unreadable: dict[str, int]


def read_keys(conn: psycopg.Connection[Any], snapshot_at: dt.datetime) -> Snapshot:
    """`LiteLLM_VerificationToken` as `KEYS_SCHEMA`: hashes only, LiteLLM never has the key."""
    types = _column_types(conn, KEYS_TABLE)
    budget = _columns(conn, "LiteLLM_BudgetTable") if "budget_id" in types else frozenset()
    items: list[sql.Composable] = []
    unreadable: list[sql.Composable] = []
    for name, column, pg_type in _KEY_COLUMNS:
        expr: sql.Composable = (
            sql.SQL("k.{}").format(sql.Identifier(column)) if column in types else sql.SQL("NULL")
        )
        if name in _KEY_BUDGET_FALLBACK and column in budget:
            expr = sql.SQL("COALESCE({}, b.{})").format(expr, sql.Identifier(column))
        items.append(
            _snapshot_item(expr, name, column, pg_type, source_type=types.get(column), unreadable=unreadable)
        )
    join = (
        sql.SQL(' LEFT JOIN "LiteLLM_BudgetTable" b ON b.budget_id = k.budget_id') if budget else sql.SQL("")
    )
    query = sql.SQL("SELECT {}, {} FROM {} k{} ORDER BY 1").format(
        sql.SQL(", ").join(items), _unreadable_list(unreadable), sql.Identifier(KEYS_TABLE), join
    )
    return _snapshot(conn, query, KEYS_TABLE, frozenset(types), schema=KEYS_SCHEMA, snapshot_at=snapshot_at)


def read_users(conn: psycopg.Connection[Any], snapshot_at: dt.datetime) -> Snapshot:
    """`LiteLLM_UserTable` as `USERS_SCHEMA`."""
    types = _column_types(conn, USERS_TABLE)
    unreadable: list[sql.Composable] = []
    items = [
        _snapshot_item(
            sql.SQL("u.{}").format(sql.Identifier(column)) if column in types else sql.SQL("NULL"),
            name,
            column,
            pg_type,
            source_type=types.get(column),
            unreadable=unreadable,
        )
        for name, column, pg_type in _USER_COLUMNS
    ]
    query = sql.SQL("SELECT {}, {} FROM {} u ORDER BY 1").format(
        sql.SQL(", ").join(items), _unreadable_list(unreadable), sql.Identifier(USERS_TABLE)
    )
    return _snapshot(conn, query, USERS_TABLE, frozenset(types), schema=USERS_SCHEMA, snapshot_at=snapshot_at)


def _snapshot_item(
    expr: sql.Composable,
    name: str,
    column: str,
    pg_type: str,
    *,
    source_type: str | None,
    unreadable: list[sql.Composable],
) -> sql.Composable:
    """One column of a key or user snapshot; a time read as the spend logs' are (NULL out
    of range), its condition for being unreadable added to `unreadable`."""
    if pg_type == "timestamp" and source_type in _TIME_TYPES:
        before = sql.Literal(EXPIRED_LONG_AGO) if column == "expires" else None
        expr, bad = _timestamp(expr, source_type, before)
        unreadable.append(sql.SQL("CASE WHEN {} THEN {} END").format(bad, sql.Literal(column)))
    return sql.SQL("{}::{} AS {}").format(expr, sql.SQL(pg_type), sql.Identifier(name))


def _unreadable_list(unreadable: list[sql.Composable]) -> sql.Composable:
    if not unreadable:
        return sql.SQL("NULL::text[]")
    return sql.SQL("array_remove(ARRAY[{}]::text[], NULL)").format(sql.SQL(", ").join(unreadable))


def _snapshot(
    conn: psycopg.Connection[Any],
    query: sql.Composed,
    table: str,
    columns: frozenset[str],
    *,
    schema: pa.Schema,
    snapshot_at: dt.datetime,
) -> Snapshot:
    if not columns:  # a release without this table: an empty snapshot, not an error
        return Snapshot(schema.empty_table(), {})
    rows = conn.execute(query).fetchall()
    unreadable: dict[str, int] = {}
    for row in rows:
        for column in row[-1] or ():
            unreadable[f"{table}.{column}"] = unreadable.get(f"{table}.{column}", 0) + 1
    data = list(zip(*rows, strict=True))[:-1] if rows else [()] * (len(schema) - 1)
    arrays = []
    for values, f in zip(data, schema, strict=False):
        naive = pa.timestamp("us") if pa.types.is_timestamp(f.type) else f.type
        arrays.append(pa.array(values, type=naive).cast(f.type))
    arrays.append(pa.repeat(pa.scalar(snapshot_at, schema.field("snapshot_at").type), len(rows)))
    return Snapshot(pa.table(arrays, schema=schema), unreadable)
