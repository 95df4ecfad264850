"""A real LiteLLM database for tests: LiteLLM's own migrations on a real PostgreSQL.

The migrations come from the PyPI package `litellm-proxy-extras` (what LiteLLM's proxy
applies at start-up). Each schema version is built once per test session as a template
database; every test gets a fresh copy (`CREATE DATABASE ... TEMPLATE`, ~0.3 s).
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import litellm_proxy_extras
import psycopg
from psycopg.types.json import Jsonb

ADMIN_URL = os.environ.get("TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
PREFIX = "usage_test_"
MIGRATIONS = Path(litellm_proxy_extras.__file__).parent / "migrations"
SAMPLES = Path(__file__).parent / "data" / "sample_spend_logs.jsonl"

# The schema versions the ETL must read: the baseline only (no status, session_id,
# request_duration_ms or created_at), up to status (LiteLLM 1.68), and all of them.
SCHEMA_VERSIONS = {
    "baseline": "20250326162113_baseline",
    "status": "20250508072103_add_status_to_spendlogs",
    "all": None,
}


def migration_dirs(up_to: str | None = None) -> list[Path]:
    """LiteLLM's migrations in the order Prisma applies them (byte order of the names)."""
    dirs = sorted((d for d in MIGRATIONS.iterdir() if d.is_dir()), key=lambda d: d.name.encode())
    if up_to is not None:
        names = [d.name for d in dirs]
        dirs = dirs[: names.index(up_to) + 1]
    return dirs


def admin() -> psycopg.Connection[Any]:
    return psycopg.connect(ADMIN_URL, autocommit=True)


def url_for(database: str) -> str:
    base = ADMIN_URL.rsplit("/", 1)[0]
    return f"{base}/{database}"


def build_template(version: str, session: str) -> str:
    name = f"{PREFIX}tpl_{version}_{session}"
    with admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    with psycopg.connect(url_for(name), autocommit=True) as conn:
        for d in migration_dirs(SCHEMA_VERSIONS[version]):
            conn.execute((d / "migration.sql").read_text(encoding="utf-8"))
    return name


def drop_database(name: str) -> None:
    with admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def drop_stale_databases(max_age_hours: float = 6) -> None:
    """Databases of test sessions that were killed before they could clean up."""
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(hours=max_age_hours)
    with admin() as conn:
        names = [
            r[0]
            for r in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", [PREFIX + "%"])
        ]
    for name in names:
        stamp = name.rsplit("_", 1)[-1]
        try:
            born = dt.datetime.strptime(stamp[:15], "%Y%m%dT%H%M%S").replace(tzinfo=dt.UTC)
        except ValueError:
            continue
        if born < cutoff:
            drop_database(name)


def session_id() -> str:
    return f"{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S}{uuid.uuid4().hex[:6]}"


@dataclass
class LiteLLMDatabase:
    """One fresh, migrated LiteLLM database."""

    name: str
    url: str

    def connect(self) -> psycopg.Connection[Any]:
        return psycopg.connect(self.url, autocommit=True)

    def columns(self, table: str = "LiteLLM_SpendLogs") -> set[str]:
        with self.connect() as conn:
            rows = conn.execute(
                "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0 "
                "AND NOT attisdropped",
                [f'"{table}"'],
            ).fetchall()
        return {r[0] for r in rows}

    def insert_spend_logs(
        self, rows: Iterable[Mapping[str, Any]], created_at: dt.datetime | None = None
    ) -> int:
        """Insert LiteLLM-shaped rows, keeping only the columns this schema version has.

        `created_at` (where the column exists) defaults to the database's clock, as
        LiteLLM leaves it; a row's own "created_at" key wins over the argument.
        """
        have = self.columns()
        groups: dict[tuple[str, ...], list[list[Any]]] = {}
        for row in rows:
            values = {k: v for k, v in row.items() if k in have and not k.startswith("_")}
            if created_at is not None and "created_at" in have:
                values.setdefault("created_at", created_at)
            for key in ("metadata", "request_tags", "messages", "response", "proxy_server_request"):
                if key in values and not isinstance(values[key], Jsonb):
                    values[key] = Jsonb(values[key])
            groups.setdefault(tuple(values), []).append(list(values.values()))
        with self.connect() as conn, conn.cursor() as cur:
            for names, params in groups.items():
                columns = ", ".join(f'"{k}"' for k in names)
                marks = ", ".join(["%s"] * len(names))
                cur.executemany(f'INSERT INTO "LiteLLM_SpendLogs" ({columns}) VALUES ({marks})', params)
        return sum(len(p) for p in groups.values())

    def execute(self, query: str, params: Any = None) -> list[tuple[Any, ...]]:
        with self.connect() as conn:
            cur = conn.execute(query, params)
            return cur.fetchall() if cur.description else []


def create_database(template: str, session: str) -> LiteLLMDatabase:
    name = f"{PREFIX}db_{uuid.uuid4().hex[:8]}_{session}"
    with admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return LiteLLMDatabase(name=name, url=url_for(name))


# --- LiteLLM-shaped rows ------------------------------------------------------------------


def samples() -> dict[str, dict[str, Any]]:
    """The twelve rows LiteLLM 1.108.7 wrote, by kind (see tests/data)."""
    out = {}
    for line in SAMPLES.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out[row["_kind"]] = row
    return out


_SAMPLES = samples()


def spend_log(kind: str = "vllm_streamed_reasoning_cached", **overrides: Any) -> dict[str, Any]:
    """A copy of a sample row with a fresh request_id; `overrides` replace columns, and
    `metadata` given as a dict is merged into the sample's metadata (None deletes a key).
    `start` moves the row's three timestamps together."""
    row = copy.deepcopy(_SAMPLES[kind])
    row["request_id"] = f"{kind}-{uuid.uuid4().hex[:12]}"
    start = overrides.pop("start", None)
    if start is not None:
        old = dt.datetime.fromisoformat(row["startTime"])
        shift = start - old
        for key in ("startTime", "endTime", "completionStartTime"):
            if row.get(key):
                row[key] = (dt.datetime.fromisoformat(row[key]) + shift).isoformat()
    metadata = overrides.pop("metadata", None)
    if isinstance(metadata, dict):
        merged = row["metadata"]
        for key, value in metadata.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
    elif metadata is not None:
        row["metadata"] = metadata
    row.update(overrides)
    for key in ("startTime", "endTime", "completionStartTime"):
        if isinstance(row.get(key), str):
            row[key] = dt.datetime.fromisoformat(row[key])
    return row


def iter_sample_rows() -> Iterator[dict[str, Any]]:
    """All twelve samples with their own request_ids."""
    for kind, row in _SAMPLES.items():
        yield spend_log(kind, request_id=row["request_id"])
