"""The ETL's health as Prometheus text-format metrics, for node_exporter's textfile
collector: written after every run (`python -m etl run --metrics-file PATH`), atomically,
so an alert can fire when the ETL stops succeeding, whatever the reason."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from itertools import takewhile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from etl.files import atomic_write_bytes
from etl.store import RUNS_FILE, RUNS_SCHEMA
from etl.transform import NOISE_REASONS

PREFIX = "llm_usage_etl"


@dataclass(frozen=True)
class Attempt:
    """What this invocation did: its outcome is known even when it never reached the
    store (a bad configuration, an unwritable store), so it is reported as well."""

    finished_at: dt.datetime
    ok: bool
    seconds: float
    rows_read: int = 0
    rows_written: int = 0
    dropped: dict[str, int] | None = None


def render(attempt: Attempt, runs: list[dict[str, Any]]) -> str:
    """The metrics text: this attempt, plus the history in etl_runs (oldest first)."""
    successes = [r["finished_at"] for r in runs if r["status"] == "ok"]
    if attempt.ok and not successes:  # a good run is in etl_runs, unless that is unreadable
        successes.append(attempt.finished_at)
    failed_total = sum(r["status"] == "failed" for r in runs)
    since_success = takewhile(lambda run: run["status"] != "ok", reversed(runs))
    consecutive = sum(1 for _ in since_success)
    if attempt.ok:
        consecutive = 0
    elif not runs or runs[-1]["status"] == "ok":
        consecutive = max(consecutive, 1)  # a failure etl_runs could not record
    dropped = attempt.dropped or {}
    out = _Metrics()
    out.gauge(
        "last_success_timestamp_seconds",
        "Unix time the last successful run finished (0: never)",
        max(successes).timestamp() if successes else 0,
    )
    finished = attempt.finished_at.timestamp()
    out.gauge("last_run_timestamp_seconds", "Unix time the last run finished", finished)
    out.gauge("last_run_success", "1 if the last run succeeded, else 0", int(attempt.ok))
    out.gauge("last_run_duration_seconds", "How long the last run took", round(attempt.seconds, 3))
    out.gauge("last_run_rows_read", "Spend-log rows the last run read", attempt.rows_read)
    out.gauge("last_run_rows_written", "Requests the last run added to the store", attempt.rows_written)
    out.family(
        "last_run_noise_dropped",
        "gauge",
        "Rows the last run dropped as LiteLLM's own noise, by reason",
        [({"reason": reason}, dropped.get(reason, 0)) for reason in NOISE_REASONS],
    )
    out.family(
        "runs_failed_total",
        "counter",
        "Failed runs recorded in the store's etl_runs",
        [({}, failed_total)],
    )
    out.gauge("consecutive_failures", "Failed runs since the last success", consecutive)
    return out.text()


def read_runs(store: Path) -> list[dict[str, Any]]:
    """etl_runs, oldest first; empty when the store has none (or cannot be read: the
    attempt's own outcome then still reaches the metrics)."""
    path = store / RUNS_FILE
    try:
        table = pq.read_table(path, schema=RUNS_SCHEMA, columns=["finished_at", "status"])
    except (OSError, ValueError):
        return []
    return sorted(table.to_pylist(), key=lambda r: r["finished_at"])


def write(path: Path, attempt: Attempt, store: Path | None) -> None:
    """`store` None: the configuration could not even say where the store is."""
    runs = read_runs(store) if store is not None else []
    atomic_write_bytes(path, render(attempt, runs).encode("utf-8"))


class _Metrics:
    def __init__(self) -> None:
        self._lines: list[str] = []

    def gauge(self, name: str, help_text: str, value: float) -> None:
        self.family(name, "gauge", help_text, [({}, value)])

    def family(
        self, name: str, kind: str, help_text: str, samples: list[tuple[dict[str, str], float]]
    ) -> None:
        full = f"{PREFIX}_{name}"
        self._lines += [f"# HELP {full} {help_text}", f"# TYPE {full} {kind}"]
        for labels, value in samples:
            shown = ",".join(f'{k}="{v}"' for k, v in labels.items())
            self._lines.append(f"{full}{{{shown}}} {_number(value)}" if shown else f"{full} {_number(value)}")

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
