"""The store's layout and Arrow schemas: `docs/store.md` written down as code.

Everything that reads or writes the store takes its paths and column types from here.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa

UTC_TS = pa.timestamp("us", tz="UTC")

REQUESTS_DIR = "requests"
ROLLUPS_DIR = "rollups"  # derived from the day files (contract/rollups.py); rebuilt, never edited
DAY_FILE = "part-0.parquet"  # one file per UTC day, replaced whole by atomic rename
KEYS_FILE = "keys.parquet"
USERS_FILE = "users.parquet"
RUNS_FILE = "etl_runs.parquet"
STATE_FILE = "state.json"
DEMO_FILE = "demo.json"  # only in a demo store (etl/demo.py): simulated data, never real
LOCK_FILE = ".etl.lock"
STAGING_DIR = ".staging"
TMP_MARK = ".tmp-"  # temporary files are named <final name>.tmp-<random>; never *.parquet
# A day file the ETL cannot read is renamed `part-0.parquet.damaged-<UTC time>` beside it
# (etl/load.py) and the day written anew; the renamed file is kept for whoever can repair
# it, readers name it (queries/snapshot.py), `--full-refresh` restores what LiteLLM holds.
SET_ASIDE = ".damaged-"

REQUESTS_SCHEMA = pa.schema(
    [
        ("request_id", pa.string()),
        ("start_time", UTC_TS),
        ("end_time", UTC_TS),
        ("completion_start_time", UTC_TS),
        ("date", pa.date32()),
        ("api_key_hash", pa.string()),
        ("key_alias", pa.string()),
        ("user_id", pa.string()),
        ("team_id", pa.string()),
        ("end_user", pa.string()),
        ("user", pa.string()),
        ("model", pa.string()),
        ("model_group", pa.string()),
        ("model_id", pa.string()),
        ("provider", pa.string()),
        ("api_base", pa.string()),
        ("node", pa.string()),
        ("user_agent", pa.string()),
        ("client", pa.string()),
        ("call_type", pa.string()),
        ("status", pa.string()),
        ("error_class", pa.string()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("total_tokens", pa.int64()),
        ("cached_tokens", pa.int64()),
        ("cache_creation_tokens", pa.int64()),
        ("reasoning_tokens", pa.int64()),
        ("spend", pa.float64()),
        ("cache_hit", pa.bool_()),
        ("session_id", pa.string()),
        ("request_tags", pa.list_(pa.string())),
        ("duration_ms", pa.int64()),
        ("ingested_at", UTC_TS),
        *((name, pa.string()) for name in ("error_code", "rate_limit", "rate_limit_scope")),
        ("attempted_fallbacks", pa.int64()),
        ("attempted_retries", pa.int64()),
        ("original_model_group", pa.string()),
        ("litellm_overhead_ms", pa.float64()),
    ]
)
# Columns added after the first release of the store, last in every file, in the order
# they came (issue 17's three, then the router's four): a day file an older version wrote
# lacks the last few of them; readers take them as NULL, and a run that adds rows to its
# day writes it anew with them NULL for the rows it had (`upgraded`).
ADDED_COLUMNS = (
    "error_code",
    "rate_limit",
    "rate_limit_scope",
    "attempted_fallbacks",
    "attempted_retries",
    "original_model_group",
    "litellm_overhead_ms",
)
# The partition key lives in the directory name (date=YYYY-MM-DD), not in the files.
REQUESTS_FILE_SCHEMA = pa.schema([f for f in REQUESTS_SCHEMA if f.name != "date"])


def older_layout(schema: pa.Schema) -> bool:
    """Whether a day file of `schema` is one this version writes, less some of the columns
    added since (the last ones)."""
    if schema == REQUESTS_FILE_SCHEMA:
        return False
    missing = len(REQUESTS_FILE_SCHEMA) - len(schema)
    kept = pa.schema(list(REQUESTS_FILE_SCHEMA)[: len(schema)])
    return 0 < missing <= len(ADDED_COLUMNS) and schema.remove_metadata() == kept


def upgraded(batch: pa.RecordBatch) -> pa.Table:
    """Rows of a day file of an `older_layout` with the columns it lacks as NULL."""
    table = pa.Table.from_batches([batch])
    for name in REQUESTS_FILE_SCHEMA.names[table.num_columns :]:
        field = REQUESTS_FILE_SCHEMA.field(name)
        table = table.append_column(field, pa.nulls(table.num_rows, field.type))
    return table.cast(REQUESTS_FILE_SCHEMA)


KEYS_SCHEMA = pa.schema(
    [
        ("api_key_hash", pa.string()),
        ("key_name", pa.string()),  # LiteLLM's abbreviated display form, "sk-...abcd"
        ("key_alias", pa.string()),
        ("user_id", pa.string()),
        ("team_id", pa.string()),
        ("spend", pa.float64()),
        ("max_budget", pa.float64()),
        ("budget_duration", pa.string()),
        ("budget_reset_at", UTC_TS),
        ("tpm_limit", pa.int64()),
        ("rpm_limit", pa.int64()),
        ("expires", UTC_TS),
        ("blocked", pa.bool_()),
        ("created_at", UTC_TS),
        ("last_active", UTC_TS),
        ("snapshot_at", UTC_TS),
    ]
)

USERS_SCHEMA = pa.schema(
    [
        ("user_id", pa.string()),
        ("user_alias", pa.string()),
        ("user_email", pa.string()),
        ("user_role", pa.string()),
        ("spend", pa.float64()),
        ("max_budget", pa.float64()),
        ("budget_duration", pa.string()),
        ("budget_reset_at", UTC_TS),
        ("tpm_limit", pa.int64()),
        ("rpm_limit", pa.int64()),
        ("created_at", UTC_TS),
        ("snapshot_at", UTC_TS),
    ]
)

RUNS_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("started_at", UTC_TS),
        ("finished_at", UTC_TS),
        ("status", pa.string()),  # ok | failed
        ("mode", pa.string()),  # incremental | full_refresh
        ("cursor_column", pa.string()),  # created_at | startTime
        ("rows_read", pa.int64()),
        ("rows_written", pa.int64()),
        ("duplicates_skipped", pa.int64()),
        ("dropped_master_key", pa.int64()),
        ("dropped_health_check", pa.int64()),
        ("dropped_by_rule", pa.int64()),
        ("rows_malformed", pa.int64()),
        ("error", pa.string()),
        ("cursor_from", UTC_TS),
        ("cursor_to", UTC_TS),
        ("kept_noise_tagged", pa.int64()),  # null in runs recorded before it was counted
    ]
)


def requests_dir(store: Path) -> Path:
    return store / REQUESTS_DIR


def day_dir(store: Path, day: dt.date) -> Path:
    return requests_dir(store) / f"date={day.isoformat()}"


def day_file(store: Path, day: dt.date) -> Path:
    return day_dir(store, day) / DAY_FILE


def stored_days(store: Path) -> list[dt.date]:
    """The UTC days that have a requests file, oldest first."""
    days = []
    for d in requests_dir(store).glob("date=*"):
        if (d / DAY_FILE).is_file():
            days.append(dt.date.fromisoformat(d.name.removeprefix("date=")))
    return sorted(days)
