"""Whole ETL runs against a real LiteLLM database: loads, increments, late rows, the archive.

One module because it is whole runs against one LiteLLM database, sharing its fixtures.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from contract.store import KEYS_FILE, RUNS_SCHEMA, STATE_FILE, USERS_FILE, day_file
from etl.errors import SourceRefused
from etl.run import RunSummary, run_etl
from settings.config import load_config
from settings.errors import ConfigError
from tests import storeview
from tests.litellm_db import MIGRATIONS, LiteLLMDatabase, iter_sample_rows, samples, spend_log

T0 = dt.datetime(2026, 11, 20, 9, 0)


def etl(db: LiteLLMDatabase, store: Path, config_text: str | None = None, **kwargs: Any) -> RunSummary:
    path = None
    if config_text is not None:
        path = store.parent / "usage.toml"
        path.write_text(config_text, encoding="utf-8")
    source = kwargs.pop("source_override", db.url)
    config = load_config(path, source=source, store=store, env=kwargs.pop("env", {}))
    return run_etl(config, **kwargs)


def files_and_mtimes(store: Path) -> dict[str, int]:
    return {str(p.relative_to(store)): p.stat().st_mtime_ns for p in store.rglob("*") if p.is_file()}


def test_first_load_writes_the_store_contract(litellm: LiteLLMDatabase, store: Path) -> None:
    litellm.insert_spend_logs(iter_sample_rows())
    summary = etl(litellm, store)

    assert (summary.rows_read, summary.rows_written, summary.duplicates_skipped) == (12, 8, 0)
    assert summary.dropped == {"health_check": 2, "master_key": 2, "rule": 0}
    assert summary.cursor_column == "created_at"
    table = storeview.requests(store)
    assert table.num_rows == 8
    # one file per UTC day, in Hive layout
    days = sorted(p.parent.name for p in (store / "requests").glob("*/*.parquet"))
    assert days == ["date=2026-11-13", "date=2026-11-15", "date=2026-11-17"]
    assert pq.read_table(day_file(store, dt.date(2026, 11, 13))).num_rows == 5
    rows = storeview.rows(store)
    vllm = rows[samples()["vllm_streamed_reasoning_cached"]["request_id"]]
    assert (vllm["user"], vllm["cached_tokens"], vllm["reasoning_tokens"]) == ("tomas.weber", 1027, 83)
    assert vllm["date"] == dt.date(2026, 11, 15)
    assert (store / KEYS_FILE).exists() and (store / USERS_FILE).exists()
    state = json.loads((store / STATE_FILE).read_text())
    assert state["cursor_column"] == "created_at" and state["cursor"] is not None
    [run] = storeview.runs(store)
    assert pq.read_schema(store / "etl_runs.parquet") == RUNS_SCHEMA
    assert (run["status"], run["rows_read"], run["rows_written"]) == ("ok", 12, 8)
    assert (run["dropped_master_key"], run["dropped_health_check"], run["dropped_by_rule"]) == (2, 2, 0)
    assert run["error"] is None
    # no temporary or staging files left behind
    assert not [p for p in store.rglob("*") if ".tmp-" in p.name or p.name == ".staging"]


def test_incremental_run_reads_only_the_new_rows(litellm: LiteLLMDatabase, store: Path) -> None:
    def row(start: dt.datetime) -> dict[str, Any]:
        return spend_log(start=start, created_at=start + dt.timedelta(seconds=12))

    litellm.insert_spend_logs(row(T0 - dt.timedelta(days=3, minutes=i)) for i in range(400))
    assert etl(litellm, store).rows_written == 400
    litellm.insert_spend_logs(row(T0 + dt.timedelta(minutes=i)) for i in range(3))
    second = etl(litellm, store)
    # the overlap re-reads the 10 minutes before the bookmark: 11 old rows, one a minute
    assert (second.rows_read, second.rows_written, second.duplicates_skipped) == (14, 3, 11)
    assert storeview.requests(store).num_rows == 403
    assert second.cursor_from == T0 - dt.timedelta(days=3, minutes=10) + dt.timedelta(seconds=12)


def test_rows_inserted_late_inside_the_overlap_are_copied_once(litellm: LiteLLMDatabase, store: Path) -> None:
    """LiteLLM flushes spend rows in batches: a transaction that began before our run
    commits afterwards with an earlier created_at and startTime."""
    litellm.insert_spend_logs(
        [spend_log(start=T0 + dt.timedelta(minutes=5))], created_at=T0 + dt.timedelta(minutes=6)
    )
    etl(litellm, store)
    late = spend_log(start=T0 + dt.timedelta(minutes=1))
    litellm.insert_spend_logs([late], created_at=T0 + dt.timedelta(minutes=2))  # 4 min behind the bookmark
    summary = etl(litellm, store)
    assert summary.rows_written == 1 and summary.duplicates_skipped == 1  # the overlap re-read
    assert late["request_id"] in storeview.rows(store)
    again = etl(litellm, store)
    assert again.rows_written == 0 and storeview.requests(store).num_rows == 2


def test_late_rows_with_the_starttime_cursor_of_older_releases(
    make_litellm_db: Callable[[str], LiteLLMDatabase], store: Path
) -> None:
    db = make_litellm_db("status")  # LiteLLM 1.68: no created_at column
    db.insert_spend_logs([spend_log(start=T0)])
    assert etl(db, store).cursor_column == "startTime"
    late = spend_log(start=T0 - dt.timedelta(minutes=90))  # within the 2 h overlap
    too_late = spend_log(start=T0 - dt.timedelta(hours=5))  # beyond it: documented limit
    db.insert_spend_logs([late, too_late])
    summary = etl(db, store)
    stored = storeview.rows(store)
    assert late["request_id"] in stored and too_late["request_id"] not in stored
    assert summary.rows_written == 1
    # a full refresh picks up what the overlap could not
    etl(db, store, full_refresh=True)
    assert too_late["request_id"] in storeview.rows(store)


def test_a_run_with_nothing_new_changes_no_data_file(litellm: LiteLLMDatabase, store: Path) -> None:
    litellm.insert_spend_logs(iter_sample_rows())
    etl(litellm, store)
    before = files_and_mtimes(store)
    summary = etl(litellm, store)
    after = files_and_mtimes(store)
    assert summary.rows_written == 0
    data = [name for name in before if name.startswith("requests/")]
    assert data and all(after[name] == before[name] for name in data)
    assert len(storeview.runs(store)) == 2


@pytest.mark.parametrize("version", ["baseline", "status", "all"])
def test_every_schema_version_loads(
    make_litellm_db: Callable[[str], LiteLLMDatabase], store: Path, version: str
) -> None:
    db = make_litellm_db(version)
    db.insert_spend_logs(iter_sample_rows())
    summary = etl(db, store)
    assert summary.rows_written == 8
    assert summary.cursor_column == ("created_at" if version == "all" else "startTime")
    rows = storeview.rows(store)
    failure = rows[samples()["failure_after_routing"]["request_id"]]
    # the baseline has no status column: metadata.status says it failed
    assert failure["status"] == "failure"
    vllm = rows[samples()["vllm_streamed_reasoning_cached"]["request_id"]]
    assert vllm["duration_ms"] == 1640  # from the column, or from endTime - startTime
    assert vllm["session_id"] == (
        None if version == "baseline" else samples()["vllm_streamed_reasoning_cached"]["session_id"]
    )


def test_upgrading_litellm_switches_the_cursor_without_losing_or_doubling_rows(
    make_litellm_db: Callable[[str], LiteLLMDatabase], store: Path
) -> None:
    db = make_litellm_db("status")
    db.insert_spend_logs([spend_log(start=T0)])
    etl(db, store)
    upgrade = MIGRATIONS / "20260818000000_add_spend_log_timestamps" / "migration.sql"
    db.execute(upgrade.read_text())  # LiteLLM 1.99's own migration
    db.insert_spend_logs([spend_log(start=T0 + dt.timedelta(minutes=3))])
    summary = etl(db, store)
    assert summary.cursor_column == "created_at" and summary.note and "cursor changed" in summary.note
    assert (summary.rows_written, summary.duplicates_skipped) == (1, 1)


def test_malformed_rows_are_counted_kept_and_do_not_stop_the_run(
    litellm: LiteLLMDatabase, store: Path
) -> None:
    rows = [
        spend_log(metadata="a JSON string instead of an object"),
        spend_log(metadata={"usage_object": {"prompt_tokens_details": {"cached_tokens": "n/a"}}}),
        spend_log(request_tags={"not": "a list"}),
        spend_log(metadata={"user_agent": None, "additional_usage_values": None}),  # nulls: fine
        spend_log(),
    ]
    litellm.insert_spend_logs(rows)
    summary = etl(litellm, store)
    assert summary.rows_written == 5
    assert summary.malformed == 3
    assert len(summary.malformed_examples) == 3
    assert storeview.runs(store)[0]["rows_malformed"] == 3


def test_noise_rules_from_the_configuration_and_the_master_key_env(
    litellm: LiteLLMDatabase, store: Path
) -> None:
    import hashlib

    master = "sk-master-of-the-lab"
    rows = [
        *iter_sample_rows(),
        spend_log(
            api_key=hashlib.sha256(master.encode()).hexdigest(),
            user="",
            metadata={"user_api_key_user_id": None},
        ),
        spend_log(metadata={"user_api_key_alias": "ci-bot"}),
        spend_log(request_tags=["load-test"]),
        spend_log(user="guest", metadata={"user_api_key_user_id": None}),
    ]
    litellm.insert_spend_logs(rows)
    config = """
[noise]
key_aliases = ["ci-bot"]
users = ["guest"]
tags = ["load-test"]
tag_keys = ["tomas-desktop"]
"""
    summary = etl(litellm, store, config, env={"LITELLM_MASTER_KEY": master})
    assert summary.dropped == {"health_check": 2, "master_key": 3, "rule": 3}
    assert summary.rows_written == 8
    run = storeview.runs(store)[0]
    assert (run["dropped_master_key"], run["dropped_health_check"], run["dropped_by_rule"]) == (3, 2, 3)
    everything = b"".join(p.read_bytes() for p in store.rglob("*") if p.is_file())
    assert master.encode() not in everything


def test_nodes_and_clients_from_the_configuration(litellm: LiteLLMDatabase, store: Path) -> None:
    litellm.insert_spend_logs(iter_sample_rows())
    config = """
[[nodes]]
name = "Blackwell (vLLM)"
api_base = ["http://ws-blackwell:8000"]

[[nodes]]
name = "L40 A"
api_base = "l40-a:8080"

[[nodes]]
name = "L40 B"
model_id = ["l40-b-qwen3-coder-30b"]

[[clients]]
name = "Eval harness"
contains = ["python-requests"]
"""
    etl(litellm, store, config)
    table = storeview.requests(store)
    nodes = dict(zip(table["request_id"].to_pylist(), table["node"].to_pylist(), strict=True))
    clients = dict(zip(table["request_id"].to_pylist(), table["client"].to_pylist(), strict=True))
    s = samples()
    assert nodes[s["vllm_streamed_reasoning_cached"]["request_id"]] == "Blackwell (vLLM)"
    assert nodes[s["llamacpp_non_streamed"]["request_id"]] == "L40 A"
    assert nodes[s["key_without_owner"]["request_id"]] == "L40 B"
    assert nodes[s["failure_before_routing"]["request_id"]] == "unknown"
    assert clients[s["key_without_owner"]["request_id"]] == "Eval harness"
    assert clients[s["claude_code_messages"]["request_id"]] == "Claude Code"


def test_the_store_keeps_rows_litellm_has_deleted(litellm: LiteLLMDatabase, store: Path) -> None:
    """LiteLLM's retention setting deletes old spend logs; the store is the archive."""
    litellm.insert_spend_logs(iter_sample_rows())
    etl(litellm, store)
    litellm.execute('DELETE FROM "LiteLLM_SpendLogs"')
    litellm.insert_spend_logs([spend_log(start=T0)])
    etl(litellm, store)
    assert storeview.requests(store).num_rows == 9
    etl(litellm, store, full_refresh=True)
    assert storeview.requests(store).num_rows == 9


def test_full_refresh_applies_the_current_configuration_to_rows_still_in_the_source(
    litellm: LiteLLMDatabase, store: Path
) -> None:
    litellm.insert_spend_logs(iter_sample_rows())
    etl(litellm, store)
    vllm_id = samples()["vllm_streamed_reasoning_cached"]["request_id"]
    eval_id = samples()["key_without_owner"]["request_id"]
    assert storeview.rows(store)[vllm_id]["node"] == "ws-blackwell:8000"
    config = """
[[nodes]]
name = "blackwell"
api_base = ["ws-blackwell:8000"]

[noise]
key_aliases = ["lab-shared-eval"]
"""
    incremental = etl(litellm, store, config)
    assert incremental.rows_written == 0
    assert storeview.rows(store)[vllm_id]["node"] == "ws-blackwell:8000"  # stored rows are not rewritten
    summary = etl(litellm, store, config, full_refresh=True)
    rows = storeview.rows(store)
    assert summary.mode == "full_refresh"
    assert rows[vllm_id]["node"] == "blackwell"
    assert eval_id not in rows  # now noise by rule: removed
    assert len(rows) == 7 and summary.dropped["rule"] == 1


def test_a_full_refresh_interrupted_is_finished_by_the_next_run(
    litellm: LiteLLMDatabase, store: Path
) -> None:
    litellm.insert_spend_logs(iter_sample_rows())
    etl(litellm, store)
    state = json.loads((store / STATE_FILE).read_text())
    state["full_refresh_pending"] = True  # as a killed --full-refresh leaves it
    (store / STATE_FILE).write_text(json.dumps(state))
    summary = etl(litellm, store)
    assert summary.mode == "full_refresh" and summary.note and "finishing" in summary.note
    assert json.loads((store / STATE_FILE).read_text())["full_refresh_pending"] is False


def test_a_different_database_is_read_whole_and_not_trusted_to_the_old_bookmark(
    make_litellm_db: Callable[[str], LiteLLMDatabase], store: Path
) -> None:
    first, second = make_litellm_db("all"), make_litellm_db("all")
    first.insert_spend_logs([spend_log(start=T0)], created_at=T0)
    etl(first, store)
    second.insert_spend_logs(
        [spend_log(start=T0 - dt.timedelta(days=30))], created_at=T0 - dt.timedelta(days=30)
    )
    summary = etl(second, store)
    assert summary.rows_written == 1 and summary.note and "belongs to" in summary.note


def test_failed_runs_are_recorded_and_leave_the_bookmark(litellm: LiteLLMDatabase, store: Path) -> None:
    litellm.insert_spend_logs(iter_sample_rows())
    etl(litellm, store)
    state_before = (store / STATE_FILE).read_text()
    litellm.execute('ALTER TABLE "LiteLLM_SpendLogs" RENAME TO "Moved"')
    with pytest.raises(Exception, match="no table LiteLLM_SpendLogs"):
        etl(litellm, store)
    runs = storeview.runs(store)
    assert [r["status"] for r in runs] == ["ok", "failed"]
    assert "no table LiteLLM_SpendLogs" in (runs[1]["error"] or "")
    assert (store / STATE_FILE).read_text() == state_before


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[source]\nurl = 'postgresql://u:pw@h/db'\n", "carries the database password"),
        ("[noise]\nmaster_key = 'sk-1'\n", "LITELLM_MASTER_KEY"),
        ("[source]\ncursor = 'updated_at'\n", "source.cursor"),
        ("[[nodes]]\nname = 'x'\n", "needs api_base or model_id"),
        ("[sourse]\n", "unknown setting sourse"),
        ("not toml at all [", "not valid TOML"),
        ("[dashboard]\nprompt_bands = [2000, 500]\n", "prompt_bands must be prompt-token edges going up"),
        ("[dashboard]\nprompt_bands = ['500']\n", "prompt_bands must be"),
        ("[dashboard]\nstable_p95_ms = 0\n", "stable_p95_ms must be a number of at least 1"),
        # numbers a run's date arithmetic would overflow on, with a traceback (issue 27.5)
        ("[source]\noverlap_minutes = inf\n", "overlap_minutes must be .* at most 1,000,000, not inf"),
        ("[source]\nmax_lateness_hours = nan\n", "max_lateness_hours must be a number"),
        ("[dashboard]\nstale_after_minutes = 1e308\n", "stale_after_minutes must be a number"),
    ],
)
def test_configuration_errors_say_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "usage.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(path, env={})


def test_the_nodes_pages_settings_come_from_the_configuration(tmp_path: Path) -> None:
    path = tmp_path / "usage.toml"
    path.write_text("[dashboard]\nprompt_bands = [1000, 4000]\nstable_p95_ms = 20000\n", encoding="utf-8")
    settings = load_config(path, env={}).dashboard
    assert (settings.prompt_bands, settings.stable_p95_ms) == ((1000, 4000), 20000.0)
    assert load_config(None, env={}).dashboard.prompt_bands == (500, 2000, 8000, 32000)


def test_a_long_load_reports_progress(
    litellm: LiteLLMDatabase, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    litellm.insert_spend_logs(spend_log(start=T0 + dt.timedelta(seconds=i)) for i in range(350))
    litellm.execute('ANALYZE "LiteLLM_SpendLogs"')
    monkeypatch.setattr("etl.run.PROGRESS_EVERY_S", 0.0)
    lines: list[str] = []
    etl(litellm, store, "[source]\nchunk_rows = 100\n", progress=lines.append)
    assert [line.split(" rows read")[0] for line in lines] == [
        "extracting: 100",
        "extracting: 200",
        "extracting: 300",
        "extracting: 350",
    ]
    assert "of ~350 (29%)" in lines[0]


def test_noise_and_repairs_are_counted_once_though_the_overlap_rereads_them(
    litellm: LiteLLMDatabase, store: Path
) -> None:
    litellm.insert_spend_logs(
        [
            spend_log("health_check", start=T0, created_at=T0),
            spend_log("master_key", start=T0, created_at=T0),
            spend_log(start=T0, created_at=T0, metadata="not an object"),
        ]
    )
    first = etl(litellm, store)
    assert first.dropped == {"health_check": 1, "master_key": 1, "rule": 0} and first.malformed == 1
    litellm.insert_spend_logs([spend_log("health_check", start=T0, created_at=T0 + dt.timedelta(minutes=1))])
    second = etl(litellm, store)  # re-reads the first three (overlap) and reads one new
    assert second.rows_read == 4
    assert second.dropped == {"health_check": 1, "master_key": 0, "rule": 0} and second.malformed == 0


def test_a_clock_ahead_cannot_push_the_bookmark_past_new_rows(litellm: LiteLLMDatabase, store: Path) -> None:
    """created_at backfilled in the server's local time (UTC+9) or written by a proxy whose
    clock runs fast must not hide the rows that follow."""
    now = litellm.execute("SELECT (now() AT TIME ZONE 'UTC')::timestamp")[0][0]
    ahead = spend_log(start=now - dt.timedelta(hours=1), created_at=now + dt.timedelta(hours=9))
    litellm.insert_spend_logs([ahead])
    etl(litellm, store)
    bookmark = dt.datetime.fromisoformat(json.loads((store / STATE_FILE).read_text())["cursor"])
    assert bookmark <= now + dt.timedelta(minutes=5)
    fresh = spend_log(start=now, created_at=now + dt.timedelta(seconds=30))
    litellm.insert_spend_logs([fresh])
    summary = etl(litellm, store)
    assert summary.rows_written == 1
    assert {ahead["request_id"], fresh["request_id"]} <= set(storeview.rows(store))


def test_a_read_only_database_user_is_enough_and_a_user_without_grants_is_told_what_to_grant(
    litellm: LiteLLMDatabase, store: Path
) -> None:
    import uuid

    litellm.insert_spend_logs(iter_sample_rows())
    role = f"usage_reader_{uuid.uuid4().hex[:8]}"
    litellm.execute(f"CREATE ROLE {role} LOGIN")
    url = litellm.url.replace("postgres@", f"{role}@")
    try:
        with pytest.raises(SourceRefused, match="needs SELECT on"):
            etl(litellm, store, env={}, source_override=url)
        litellm.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        assert etl(litellm, store, source_override=url).rows_written == 8
    finally:
        litellm.execute(f"DROP OWNED BY {role}")
        litellm.execute(f"DROP ROLE {role}")
