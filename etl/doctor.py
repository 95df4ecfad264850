"""`python -m etl doctor`: read-only checks of an installation, each with what to do.

Every check returns `Check` records (data, so the tests and any other caller can look at
them); `report` turns them into the lines a person reads. Nothing here writes: not the
store (not even to create its directory), not the database (a read-only connection that
only looks at the catalog and at `_prisma_migrations`).

This module runs the whole examination (`diagnose`). The checks, one module per subject,
are re-exported from here: doctor_config.py (the settings), doctor_database.py (LiteLLM's
database), doctor_store.py (the store's files) and doctor_runs.py (the run lock, the
bookmark, the snapshots, the run history); doctor_report.py holds `Check` and the report.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from pathlib import Path

from etl import extract
from etl.doctor_config import _source_origin, check_config, check_source, check_timezone
from etl.doctor_database import (
    CONNECT_TIMEOUT_S,
    LATER_COLUMNS,
    READ_TABLES,
    STATEMENT_TIMEOUT,
    check_database,
)
from etl.doctor_report import (
    EXIT_FIX_NEEDED,
    EXIT_OK,
    MAX_NAMED,
    Check,
    Status,
    exit_code,
    fail,
    format_check,
    ok,
    report,
    warn,
)
from etl.doctor_runs import (
    STUCK_AFTER,
    LockInfo,
    check_last_run,
    check_lock,
    check_runs_file,
    check_snapshot,
    check_state,
    read_lock,
)
from etl.doctor_store import (
    check_day_files,
    check_directory,
    check_not_demo,
    check_rollups,
    check_set_aside,
    check_staging,
    check_store,
    check_temporary_files,
    check_unexpected_files,
    day_files,
)

__all__ = [
    "CONNECT_TIMEOUT_S",
    "EXIT_FIX_NEEDED",
    "EXIT_OK",
    "LATER_COLUMNS",
    "MAX_NAMED",
    "READ_TABLES",
    "STATEMENT_TIMEOUT",
    "STUCK_AFTER",
    "Check",
    "LockInfo",
    "Status",
    "check_config",
    "check_database",
    "check_day_files",
    "check_directory",
    "check_last_run",
    "check_lock",
    "check_not_demo",
    "check_rollups",
    "check_runs_file",
    "check_set_aside",
    "check_snapshot",
    "check_source",
    "check_staging",
    "check_state",
    "check_store",
    "check_temporary_files",
    "check_timezone",
    "check_unexpected_files",
    "day_files",
    "diagnose",
    "exit_code",
    "fail",
    "format_check",
    "ok",
    "read_lock",
    "report",
    "warn",
]


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
