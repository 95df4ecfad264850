"""Extraction from a real, migrated LiteLLM database, for every schema version we support."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import psycopg
import pytest

from etl import extract
from etl.extract import RAW_SCHEMA, Window, table_from_rows
from tests.litellm_db import LiteLLMDatabase, iter_sample_rows, spend_log


def read_all(
    db: LiteLLMDatabase, window: Window | None = None, chunk_rows: int = 1000
) -> list[dict[str, object]]:
    url = extract.parse_source_url(db.url)
    with extract.connect(url) as conn:
        info = extract.inspect_source(conn, db.name)
        tables = list(extract.read_spend_logs(conn, info, window, chunk_rows))
    rows = [r for t in tables for r in t.to_pylist()]
    return sorted(rows, key=lambda r: str(r["request_id"]))


@pytest.mark.parametrize("version", ["baseline", "status", "all"])
def test_sql_extraction_matches_the_python_reading_of_the_same_rows(
    make_litellm_db: Callable[[str], LiteLLMDatabase], version: str
) -> None:
    """The two ways rows enter the transform (PostgreSQL for real, Python dicts for tests and
    the demo) follow the same JSON paths; columns an older schema lacks read as NULL."""
    db = make_litellm_db(version)
    rows = list(iter_sample_rows())
    db.insert_spend_logs(rows)
    from_sql = read_all(db)
    columns = db.columns()
    expected = table_from_rows({k: v for k, v in r.items() if k in columns} for r in rows).to_pylist()
    expected.sort(key=lambda r: str(r["request_id"]))
    for got, want in zip(from_sql, expected, strict=True):
        got.pop("created_at")  # set by the database's clock
        want.pop("created_at")
        assert got == want
    assert len(from_sql) == 12
    if version == "baseline":
        assert all(r["status"] is None and r["request_duration_ms"] is None for r in from_sql)


def test_chunks_are_bounded_and_complete(litellm: LiteLLMDatabase) -> None:
    base = dt.datetime(2026, 11, 1, 0, 0)
    litellm.insert_spend_logs(spend_log(start=base + dt.timedelta(minutes=i)) for i in range(250))
    url = extract.parse_source_url(litellm.url)
    with extract.connect(url) as conn:
        info = extract.inspect_source(conn, litellm.name)
        sizes = [t.num_rows for t in extract.read_spend_logs(conn, info, None, 100)]
        assert all(t.schema == RAW_SCHEMA for t in extract.read_spend_logs(conn, info, None, 100))
    assert sizes == [100, 100, 50]


def test_prompts_and_responses_are_never_read(litellm: LiteLLMDatabase) -> None:
    secret = "the student's private prompt 7f3a"
    litellm.insert_spend_logs(
        [
            spend_log(
                messages=[{"role": "user", "content": secret}],
                response={"choices": [{"message": {"content": secret}}]},
                proxy_server_request={"body": {"messages": [{"content": secret}]}},
            )
        ]
    )
    url = extract.parse_source_url(litellm.url)
    with extract.connect(url) as conn:
        info = extract.inspect_source(conn, litellm.name)
        query, _ = extract.spend_logs_query(info, None)
        text = query.as_string(conn)
    for column in ("messages", "response", "proxy_server_request"):
        assert f'"{column}"' not in text and f"s.{column}" not in text
    assert secret not in repr(read_all(litellm))


def test_incremental_window_reads_recent_rows_through_an_index(litellm: LiteLLMDatabase) -> None:
    """An incremental read must cost what the new rows cost, not what the table costs:
    PostgreSQL answers it from the startTime index, for either cursor."""
    old = dt.datetime(2026, 9, 1)
    litellm.insert_spend_logs(
        (spend_log(start=old + dt.timedelta(minutes=i)) for i in range(3000)),
        created_at=old + dt.timedelta(days=1),
    )
    recent = dt.datetime(2026, 11, 20, 12, 0)
    litellm.insert_spend_logs(
        (spend_log(start=recent + dt.timedelta(minutes=i)) for i in range(5)),
        created_at=recent + dt.timedelta(hours=1),
    )
    litellm.execute('ANALYZE "LiteLLM_SpendLogs"')
    windows = [
        Window("created_at", cursor_from=recent, start_floor=recent - dt.timedelta(hours=24)),
        Window("startTime", cursor_from=recent - dt.timedelta(hours=2)),
    ]
    url = extract.parse_source_url(litellm.url)
    for window in windows:
        with extract.connect(url) as conn:
            info = extract.inspect_source(conn, litellm.name)
            query, params = extract.spend_logs_query(info, window)
            plan = "\n".join(r[0] for r in conn.execute(psycopg.sql.SQL("EXPLAIN {}").format(query), params))
        assert "Index" in plan and 'Seq Scan on "LiteLLM_SpendLogs"' not in plan, plan
        assert len(read_all(litellm, window)) == 5


def test_snapshots_of_keys_and_users(litellm: LiteLLMDatabase) -> None:
    litellm.execute(
        'INSERT INTO "LiteLLM_BudgetTable" (budget_id, max_budget, tpm_limit, created_by, updated_by) '
        "VALUES ('tier-s', 25.0, 50000, 'admin', 'admin')"
    )
    litellm.execute(
        'INSERT INTO "LiteLLM_VerificationToken" (token, key_name, key_alias, user_id, spend, max_budget, '
        "budget_duration, budget_reset_at, tpm_limit, rpm_limit, blocked, expires, budget_id) VALUES "
        "('aa11', 'sk-...wxyz', 'tomas-desktop', 'tomas.weber', 3.25, 10.0, '30d', '2026-12-15 00:00', "
        "20000, 60, false, '2027-03-01 00:00', NULL), "
        "('bb22', 'sk-...abcd', 'priya-laptop', 'priya.nair', 1.5, NULL, NULL, NULL, NULL, NULL, true, "
        "NULL, 'tier-s')"
    )
    litellm.execute(
        'INSERT INTO "LiteLLM_UserTable" (user_id, user_alias, user_email, user_role, max_budget, spend, '
        "password) VALUES ('tomas.weber', 'Tomas', 'tomas@lab.example', 'internal_user', 40.0, 3.25, "
        "'hashed-secret')"
    )
    now = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    url = extract.parse_source_url(litellm.url)
    with extract.connect(url) as conn:
        keys = {k["api_key_hash"]: k for k in extract.read_keys(conn, now).table.to_pylist()}
        users = extract.read_users(conn, now).table
    assert keys["aa11"]["max_budget"] == 10.0 and keys["aa11"]["tpm_limit"] == 20000
    assert keys["aa11"]["budget_reset_at"] == dt.datetime(2026, 12, 15, tzinfo=dt.UTC)
    assert keys["aa11"]["expires"] == dt.datetime(2027, 3, 1, tzinfo=dt.UTC)
    assert keys["bb22"]["blocked"] is True
    # a key on a budget tier takes the tier's limits
    assert (keys["bb22"]["max_budget"], keys["bb22"]["tpm_limit"]) == (25.0, 50000)
    assert users.num_rows == 1 and "password" not in users.column_names
    assert users.to_pylist()[0]["user_email"] == "tomas@lab.example"
    assert "hashed-secret" not in repr(users.to_pylist())
