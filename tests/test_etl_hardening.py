"""Sources and stores that are not what they should be: malformed rows, odd column types,
bad URLs, a store directory that is not a store. Each is a warning or a one-line error,
never a traceback, and never harm to files the ETL does not own."""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
from pathlib import Path
from typing import Any

import pytest

from contract.store import LOCK_FILE, STATE_FILE
from dashboard.signin import student_check
from etl.errors import StoreNotWritable
from etl.run import RunSummary, ingest_rows, run_etl
from queries.runner import StoreReader
from settings.config import load_config, sha256_hex
from tests import storeview
from tests.litellm_db import LiteLLMDatabase, spend_log
from tests.test_etl_cli import cli

T0 = dt.datetime(2026, 11, 20, 9, 0)


def etl(db: LiteLLMDatabase, store: Path, **kwargs: Any) -> RunSummary:
    return run_etl(load_config(None, source=db.url, store=store, env={}), **kwargs)


def row(minutes: int = 0, **overrides: Any) -> dict[str, Any]:
    start = T0 + dt.timedelta(minutes=minutes)
    return spend_log(start=start, created_at=start + dt.timedelta(seconds=5), **overrides)


def set_column(db: LiteLLMDatabase, request_id: str, column: str, value: str) -> None:
    """Store a value only SQL can write (an infinite timestamp, NaN) into one row."""
    db.execute(f'UPDATE "LiteLLM_SpendLogs" SET "{column}" = %s WHERE request_id = %s', [value, request_id])


def alter_type(db: LiteLLMDatabase, column: str, new_type: str, using: str) -> None:
    db.execute(f'ALTER TABLE "LiteLLM_SpendLogs" ALTER COLUMN "{column}" TYPE {new_type} USING {using}')


# --- point 9: malformed rows are counted, named and skipped or repaired -----------------------


def test_unusable_timestamps_are_malformed_rows_not_a_crash(
    litellm: LiteLLMDatabase, store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good, bad_end, bad_first, bad_created = row(0), row(1), row(2), row(3)
    no_start = [row(4 + i) for i in range(3)]
    litellm.insert_spend_logs([good, bad_end, bad_first, bad_created, *no_start])
    set_column(litellm, bad_end["request_id"], "endTime", "infinity")
    set_column(litellm, bad_first["request_id"], "completionStartTime", "-infinity")
    set_column(litellm, bad_created["request_id"], "created_at", "infinity")
    for r, value in zip(no_start, ("infinity", "0044-03-15 BC", "10000-01-01"), strict=True):
        set_column(litellm, r["request_id"], "startTime", value)

    with caplog.at_level(logging.WARNING, logger="etl"):
        summary = etl(litellm, store)

    stored = storeview.rows(store)
    # a row without a usable startTime cannot be placed in a day: skipped; the rest is kept
    assert set(stored) == {r["request_id"] for r in (good, bad_end, bad_first, bad_created)}
    assert summary.rows_written == 4
    assert summary.malformed == 6 and summary.malformed_skipped == 3
    # an end time that cannot be read is derived from the start and the duration
    kept = stored[bad_end["request_id"]]
    assert kept["end_time"] == kept["start_time"] + dt.timedelta(milliseconds=kept["duration_ms"])
    assert stored[bad_first["request_id"]]["completion_start_time"] is None
    warning = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    for r in (bad_end, *no_start[:2]):
        assert r["request_id"] in warning
    assert "startTime" in warning and "skipped" in warning
    [run] = storeview.runs(store)
    assert run["rows_malformed"] == 6

    # the bookmark stays finite and next runs go on copying what is new
    state = json.loads((store / STATE_FILE).read_text())
    assert dt.datetime.fromisoformat(state["cursor"]) < dt.datetime.now() + dt.timedelta(days=1)
    later = row(30)
    litellm.insert_spend_logs([later])
    second = etl(litellm, store)
    assert later["request_id"] in storeview.rows(store)
    assert second.rows_written == 1


def test_an_infinite_created_at_cannot_poison_the_bookmark(litellm: LiteLLMDatabase, store: Path) -> None:
    first = row(0)
    litellm.insert_spend_logs([first])
    assert etl(litellm, store).rows_written == 1
    # read in an incremental run only if the window reaches it: it must not break the run
    odd, later = row(1), row(2)
    litellm.insert_spend_logs([odd, later])
    set_column(litellm, odd["request_id"], "created_at", "-infinity")
    etl(litellm, store)
    etl(litellm, store, full_refresh=True)
    state = json.loads((store / STATE_FILE).read_text())
    assert dt.datetime.fromisoformat(state["cursor"]) == later["created_at"]
    assert {first["request_id"], odd["request_id"], later["request_id"]} <= set(storeview.rows(store))


def test_nan_negative_or_infinite_spend_and_negative_tokens_are_repaired(
    litellm: LiteLLMDatabase, store: Path
) -> None:
    fine, nan, inf, negative, tokens = (row(i, spend=0.25) for i in range(5))
    litellm.insert_spend_logs([fine, nan, inf, negative, tokens])
    set_column(litellm, nan["request_id"], "spend", "NaN")
    set_column(litellm, inf["request_id"], "spend", "Infinity")
    set_column(litellm, negative["request_id"], "spend", "-3")
    set_column(litellm, tokens["request_id"], "prompt_tokens", "-7")
    set_column(litellm, tokens["request_id"], "total_tokens", "-1")

    summary = etl(litellm, store)

    stored = storeview.rows(store)
    assert len(stored) == 5 and summary.malformed == 4
    spend = {rid: r["spend"] for rid, r in stored.items()}
    assert all(math.isfinite(v) and v >= 0 for v in spend.values())
    assert spend[fine["request_id"]] == 0.25 and spend[nan["request_id"]] == 0.0
    assert (stored[tokens["request_id"]]["prompt_tokens"], stored[tokens["request_id"]]["total_tokens"]) == (
        0,
        0,
    )
    assert stored[tokens["request_id"]]["cached_tokens"] == 0  # never more than the prompt


def test_a_request_id_repeated_on_another_day_is_kept_once(litellm: LiteLLMDatabase, store: Path) -> None:
    # a partitioned spend-log table keys on (request_id, startTime): one id may come twice
    litellm.execute('ALTER TABLE "LiteLLM_SpendLogs" DROP CONSTRAINT "LiteLLM_SpendLogs_pkey"')
    first = row(0)
    again = {**row(60 * 24 * 2 + 5), "request_id": first["request_id"]}
    litellm.insert_spend_logs([first, again])

    summary = etl(litellm, store)

    table = storeview.requests(store)
    assert table["request_id"].to_pylist() == [first["request_id"]]
    assert table["date"].to_pylist() == [T0.date()]  # the first copy written stays
    assert summary.malformed == summary.malformed_skipped == 1
    assert first["request_id"] in summary.malformed_examples[0]

    # a copy arriving in a later run, on yet another day, is skipped as well
    third = {**row(60 * 24 * 5), "request_id": first["request_id"]}
    litellm.insert_spend_logs([third])
    assert etl(litellm, store).rows_written == 0
    assert storeview.requests(store)["request_id"].to_pylist() == [first["request_id"]]
    etl(litellm, store, full_refresh=True)
    assert storeview.requests(store)["date"].to_pylist() == [T0.date()]


def test_rows_from_python_follow_the_same_rules(store: Path) -> None:
    # the demo and tests feed rows without a database: the same values, the same outcome
    good, bad_start, bad_count = row(0), row(1), row(2)
    bad_start["startTime"] = "infinity"
    bad_count["prompt_tokens"] = "many"
    summary = ingest_rows(load_config(None, source=None, store=store, env={}), [good, bad_start, bad_count])
    assert set(storeview.rows(store)) == {good["request_id"], bad_count["request_id"]}
    assert (summary.malformed, summary.malformed_skipped) == (2, 1)
    assert storeview.rows(store)[bad_count["request_id"]]["prompt_tokens"] == 0


# --- issue 27, point 3: out-of-range times in LiteLLM's key and user tables ----------------------

KEY_TIMES = ("expires", "budget_reset_at", "last_active", "created_at")
ODD_TIMES = ("infinity", "-infinity", "10000-01-01", "0044-03-15 BC")


def test_odd_times_in_keys_and_users_are_unknown_and_an_expiry_before_year_1_has_passed(
    litellm: LiteLLMDatabase, store: Path, caplog: pytest.LogCaptureFixture
) -> None:
    keys = {"never": "infinity", "gone": "-infinity", "far": "10000-01-01", "old": "0044-03-15 BC"}
    for alias, expiry in keys.items():
        litellm.execute(
            'INSERT INTO "LiteLLM_VerificationToken" (token, key_alias, user_id, expires) '
            "VALUES (%s, %s, %s, %s)",
            [sha256_hex(f"sk-{alias}"), alias, f"{alias}.user", expiry],
        )
    odd_key = sha256_hex("sk-odd")
    litellm.execute(
        'INSERT INTO "LiteLLM_VerificationToken" '
        "(token, key_alias, budget_reset_at, last_active, created_at) "
        "VALUES (%s, 'odd', 'infinity', '-infinity', '0044-03-15 BC')",
        [odd_key],
    )
    for i, value in enumerate(ODD_TIMES):
        litellm.execute(
            'INSERT INTO "LiteLLM_UserTable" (user_id, budget_reset_at, created_at) VALUES (%s, %s, %s)',
            [f"user-{i}", value, "2026-11-01" if i % 2 else value],
        )
    r = row(0)
    litellm.insert_spend_logs([r])

    with caplog.at_level(logging.WARNING, logger="etl"):
        summary = etl(litellm, store)

    assert set(storeview.rows(store)) == {r["request_id"]}
    content = storeview.content(store)
    stored = {k["key_alias"]: k for k in content["keys.parquet"]}
    assert set(stored) == {*keys, "odd"}
    assert stored["never"]["expires"] is None and stored["far"]["expires"] is None  # never expires
    for alias in ("gone", "old"):  # expired long ago: fail closed
        assert stored[alias]["expires"] == dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    assert all(stored["odd"][column] is None for column in KEY_TIMES)
    users = {u["user_id"]: u for u in content["users.parquet"]}
    assert len(users) == 4 and all(u["budget_reset_at"] is None for u in users.values())
    assert users["user-1"]["created_at"] == dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    assert summary.unknown_values == {
        "LiteLLM_VerificationToken.expires": 4,
        "LiteLLM_VerificationToken.budget_reset_at": 1,
        "LiteLLM_VerificationToken.last_active": 1,
        "LiteLLM_VerificationToken.created_at": 1,
        "LiteLLM_UserTable.budget_reset_at": 4,
        "LiteLLM_UserTable.created_at": 2,
    }
    assert "13 key or user time(s) unknown" in summary.line()
    warning = " ".join(m.getMessage() for m in caplog.records if m.levelno == logging.WARNING)
    assert (
        "LiteLLM_VerificationToken.expires (4)" in warning and "LiteLLM_UserTable.created_at (2)" in warning
    )

    # a signed-in student's key is re-checked against this copy (dashboard/main.py): an expiry of -infinity or
    # BC has passed, one of infinity or year 10000 never comes
    reader = StoreReader(store)
    checks = {alias: student_check(sha256_hex(f"sk-{alias}"), reader).problem for alias in keys}
    assert checks == {"never": "ok", "far": "ok", "gone": "expired", "old": "expired"}


# --- point 13: odd URLs and column types: handled, or one clear line ---------------------------


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("postgresql://lab@127.0.0.1:54x2/litellm", "port"),
        ("postgresql://lab@[::1/litellm", "host"),
        ("postgresql://lab@[::1]:99999/litellm", "port"),
        ("postgresql://lab@127.0.0.1:5432/litellm?sslmdoe=require", "sslmdoe"),
    ],
)
def test_a_malformed_source_url_is_a_usage_error(tmp_path: Path, url: str, named: str) -> None:
    result = cli("run", "--source", url, "--store", str(tmp_path / "s"))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and named in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_metadata_stored_as_text_or_json_is_read_all_the_same(make_litellm_db: Any, tmp_path: Path) -> None:
    for new_type in ("text", "json"):
        db = make_litellm_db("all")
        r = row(0, metadata={"user_api_key_alias": "ada-laptop"})
        db.insert_spend_logs([r])
        alter_type(db, "metadata", new_type, f"metadata::{new_type}")
        summary = etl(db, tmp_path / new_type)
        assert summary.malformed == 0
        assert storeview.rows(tmp_path / new_type)[r["request_id"]]["key_alias"] == "ada-laptop"


def test_metadata_text_that_is_not_json_is_a_data_error(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    r = row(0)
    litellm.insert_spend_logs([r])
    alter_type(litellm, "metadata", "text", "metadata::text")
    set_column(litellm, r["request_id"], "metadata", "{not json")
    result = cli("run", "--source", litellm.url, "--store", str(tmp_path / "s"))
    assert result.returncode == 65, result.stderr
    assert "Traceback" not in result.stderr and "metadata" in result.stderr and "JSON" in result.stderr


def test_request_tags_stored_as_a_text_array(litellm: LiteLLMDatabase, store: Path) -> None:
    r = row(0, request_tags=["User-Agent: claude-cli", "team-a"])
    litellm.insert_spend_logs([r])
    # ALTER ... TYPE ... USING takes no subquery: through a new column
    litellm.execute(
        'ALTER TABLE "LiteLLM_SpendLogs" RENAME COLUMN request_tags TO old_tags;'
        'ALTER TABLE "LiteLLM_SpendLogs" ADD COLUMN request_tags text[];'
        'UPDATE "LiteLLM_SpendLogs" SET request_tags = ARRAY(SELECT jsonb_array_elements_text(old_tags));'
        'ALTER TABLE "LiteLLM_SpendLogs" DROP COLUMN old_tags'
    )
    summary = etl(litellm, store)
    assert summary.malformed == 0
    assert storeview.rows(store)[r["request_id"]]["request_tags"] == ["User-Agent: claude-cli", "team-a"]


def test_token_counts_stored_as_text(litellm: LiteLLMDatabase, store: Path) -> None:
    fine, odd = row(0, prompt_tokens=1200), row(1)
    litellm.insert_spend_logs([fine, odd])
    for column in ("prompt_tokens", "completion_tokens", "total_tokens"):
        alter_type(litellm, column, "text", f"{column}::text")
    set_column(litellm, odd["request_id"], "completion_tokens", "many")
    summary = etl(litellm, store)
    stored = storeview.rows(store)
    assert stored[fine["request_id"]]["prompt_tokens"] == 1200
    assert stored[odd["request_id"]]["completion_tokens"] == 0
    assert summary.malformed == 1 and odd["request_id"] in summary.malformed_examples[0]


# --- point 14: the store directory -------------------------------------------------------------


def test_a_symlinked_lock_file_is_not_followed(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("do not truncate me")
    store = tmp_path / "store"
    store.mkdir()
    (store / LOCK_FILE).symlink_to(precious)
    with pytest.raises(StoreNotWritable, match="symbolic link"):
        etl(litellm, store)
    assert precious.read_text() == "do not truncate me"


def test_only_the_etls_own_temporary_files_are_cleaned(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    # --store pointed at a directory of other things by mistake
    store = tmp_path / "home"
    others = [
        store / "notes.tmp-1234",
        store / "project" / "build.tmp-abcdef12",
        store / "project" / "state.json.tmp-0a1b2c3d",
        store / "requests" / "date=2026-11-20" / "mine.csv.tmp-0a1b2c3d",
        store / ".staging" / "my-own-folder" / "keep.txt",
    ]
    for path in others:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("someone else's")
    leftovers = [
        store / "state.json.tmp-0a1b2c3d",
        store / "requests" / "date=2026-11-20" / "part-0.parquet.tmp-0a1b2c3d",
        store / "rollups" / "date=2026-11-20" / "rollup-v1-1-2.parquet.tmp-0a1b2c3d",
        store / ".staging" / "20261120T090000Z-0a1b2c3d" / "2026-11-20" / "kept-000001.parquet",
    ]
    for path in leftovers:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("killed run")
    litellm.insert_spend_logs([row(0)])

    etl(litellm, store)

    assert all(p.exists() for p in others), [str(p) for p in others if not p.exists()]
    assert not any(p.exists() for p in leftovers), [str(p) for p in leftovers if p.exists()]
    assert [p.name for p in (store / ".staging").iterdir()] == ["my-own-folder"]
