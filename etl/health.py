"""The ETL's health as Prometheus text-format metrics, for node_exporter's textfile
collector: written after every run (`python -m etl run --metrics-file PATH`), atomically,
so an alert can fire when the ETL stops succeeding, whatever the reason; and each budget's
share used and forecast run-out (queries/budgets.sql), so one can fire before it runs out."""

from __future__ import annotations

import datetime as dt
import logging
import math
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import takewhile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from contract.store import RUNS_FILE, RUNS_SCHEMA
from etl.files import atomic_write_bytes
from etl.transform import NOISE_REASONS
from settings.errors import ConfigError
from settings.toml_file import kind_of

log = logging.getLogger("etl")

PREFIX = "llm_usage_etl"
BUDGET_PREFIX = "llm_usage_budget"
HASH_SHOWN = 8  # hex digits of a key's hash naming a key without an alias: 32 bits, nothing to reverse


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


@dataclass(frozen=True)
class Budget:
    """One budget and its forecast: a key's, or a person's own across their keys."""

    labels: tuple[tuple[str, str], ...]  # never the key: its alias, its user
    used: float | None  # spend / budget (None: a budget of 0)
    runs_out_at: dt.datetime | None  # only when the forecast is that it runs out before its reset
    reset_at: dt.datetime | None
    problem: str | None = None  # the setting LiteLLM holds that cannot be read (budget, spend, period)


def budgets_of(rows: Iterable[Mapping[str, Any]]) -> list[Budget]:
    """The budgets in budgets.sql's rows (one per key; a person's own budget is repeated on
    each of their keys), keys without a budget left out. A key is named by its alias and
    its user; one without an alias by `#` and the first HASH_SHOWN hex digits of its hash,
    since a person may hold several, and their series must stay apart from run to run. A
    person's own budget is named by their user id."""
    keys: list[tuple[dict[str, str], str, Budget]] = []
    users: dict[str, Budget] = {}
    for row in rows:
        short = f"#{row['api_key_hash'][:HASH_SHOWN]}"
        if row["max_budget"] is not None or row["budget_problem"]:  # NaN reaches here as None
            labels = {"budget": "key", "key_alias": row["key_alias"] or short}
            if row["user_id"]:
                labels["user"] = row["user_id"]
            runs_out = row["runs_out_at"] if row["forecast"] == "runs_out" else None
            budget = Budget(
                (), _ratio(row["budget_used"]), runs_out, row["budget_reset_at"], row["budget_problem"]
            )
            keys.append((labels, short, budget))
        user = row["user_id"]
        if user and (row["user_max_budget"] is not None or row["user_budget_problem"]) and user not in users:
            runs_out = row["user_runs_out_at"] if row["user_forecast"] == "runs_out" else None
            named = (("budget", "user"), ("user", user))
            used, reset_at = _ratio(row["user_budget_used"]), row["user_budget_reset_at"]
            users[user] = Budget(named, used, runs_out, reset_at, row["user_budget_problem"])
    return [*_distinct(keys), *users.values()]


def _distinct(keys: list[tuple[dict[str, str], str, Budget]]) -> list[Budget]:
    """Two series with the same labels make Prometheus reject the whole file, and aliases
    are set by the keys' holders: keys that share an alias and a user get their short hash
    added to it, and a series that still repeats one (an alias made to) is left out."""
    seen: dict[tuple[tuple[str, str], ...], int] = {}
    for labels, _, _ in keys:
        seen[tuple(labels.items())] = seen.get(tuple(labels.items()), 0) + 1
    out: dict[tuple[tuple[str, str], ...], Budget] = {}
    for labels, short, budget in keys:
        named = tuple(labels.items())
        if seen[named] > 1:
            named = tuple((labels | {"key_alias": f"{labels['key_alias']} {short}"}).items())
        if named in out:
            log.warning("budget metrics: two keys named %r; only the first is reported", dict(named))
            continue
        out[named] = Budget(named, budget.used, budget.runs_out_at, budget.reset_at, budget.problem)
    return list(out.values())


def _ratio(value: Any) -> float | None:
    """A share used as the file can carry it: None for none (a budget of 0 or one that
    cannot be read; pandas hands those over as NaN)."""
    return None if value is None or not math.isfinite(value) else float(value)


def render(attempt: Attempt, runs: list[dict[str, Any]], budgets: list[Budget] | None = None) -> str:
    """The metrics text: this attempt, plus the history in etl_runs (oldest first), and
    the budgets (None: they could not be computed; reported as such)."""
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
    return out.text() + _budget_metrics(budgets, attempt.finished_at).text()


def _budget_metrics(budgets: list[Budget] | None, now: dt.datetime) -> _Metrics:
    """Per budget, its share used; for one forecast to run out before its reset, the hours
    from `now` (when this file is written) to the run-out: no series for one that lasts,
    so that an alert is a plain threshold on it."""
    out = _Metrics(BUDGET_PREFIX)
    out.gauge(
        "metrics_success",
        "1 if the budget series below come from the store's key list, 0 if they were skipped "
        "(no key list yet, or the store could not be read: the ETL's log says why)",
        int(budgets is not None),
    )
    budgets = budgets or []
    out.family(
        "used_ratio",
        "gauge",
        "Spend over the budget as of the last copy of LiteLLM's key list (1: used up)",
        [(dict(b.labels), round(b.used, 6)) for b in budgets if b.used is not None],
    )
    out.family(
        "runout_hours",
        "gauge",
        "Hours until the budget runs out at the pace of the last 7 days; only for budgets that "
        "run out before their reset (negative: past the forecast time): no series for a budget "
        "that lasts until its reset, runs out over a century from now, or cannot be read",
        [
            (dict(b.labels), round((b.runs_out_at - now).total_seconds() / 3600, 4))
            for b in budgets
            if b.runs_out_at is not None
        ],
    )
    out.family(
        "reset_timestamp_seconds",
        "gauge",
        "Unix time LiteLLM resets the budget",
        [(dict(b.labels), b.reset_at.timestamp()) for b in budgets if b.reset_at is not None],
    )
    out.family(
        "invalid",
        "gauge",
        "1 for a budget whose setting in LiteLLM cannot be read (reason: budget not finite or "
        "negative, spend not finite, period not one LiteLLM writes or over a century): no "
        "share or run-out for a budget or spend, the week's pace for a period",
        [(dict(b.labels) | {"reason": b.problem}, 1) for b in budgets if b.problem],
    )
    return out


def read_runs(store: Path) -> list[dict[str, Any]]:
    """etl_runs, oldest first; empty when the store has none (or cannot be read: the
    attempt's own outcome then still reaches the metrics)."""
    path = store / RUNS_FILE
    try:
        table = pq.read_table(path, schema=RUNS_SCHEMA, columns=["finished_at", "status"])
    except (OSError, ValueError):
        return []
    return sorted(table.to_pylist(), key=lambda r: r["finished_at"])


def write(path: Path, attempt: Attempt, store: Path | None, budgets: list[Budget] | None = None) -> None:
    """`store` None: the configuration could not even say where the store is."""
    runs = read_runs(store) if store is not None else []
    text = render(attempt, runs, budgets).encode("utf-8")
    check_path(path)  # again: the path may have changed during the run
    atomic_write_bytes(path, text)  # through a temporary file beside it, then a rename


def check_path(path: Path) -> None:
    """A metrics file goes into an existing folder, over nothing or a regular file: a
    mistyped path must not create folders, and a rename over anything else replaces it
    (run as root, over /dev/full, the device itself). ConfigError says which it is."""
    if not path.parent.is_dir():
        raise ConfigError(
            f"--metrics-file {path}: the folder {path.parent} does not exist (the ETL creates none): "
            "give a path in an existing folder, e.g. node_exporter's textfile collector directory"
        )
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"--metrics-file {path} cannot be checked: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise ConfigError(
            f"--metrics-file {path} is {kind_of(mode)}; the ETL replaces only a regular file: "
            "give the path of a .prom file"
        )


class _Metrics:
    def __init__(self, prefix: str = PREFIX) -> None:
        self._prefix = prefix
        self._lines: list[str] = []

    def gauge(self, name: str, help_text: str, value: float) -> None:
        self.family(name, "gauge", help_text, [({}, value)])

    def family(
        self, name: str, kind: str, help_text: str, samples: list[tuple[dict[str, str], float]]
    ) -> None:
        full = f"{self._prefix}_{name}"
        self._lines += [f"# HELP {full} {help_text}", f"# TYPE {full} {kind}"]
        for labels, value in samples:
            shown = ",".join(f'{k}="{_escaped(v)}"' for k, v in labels.items())
            self._lines.append(f"{full}{{{shown}}} {_number(value)}" if shown else f"{full} {_number(value)}")

    def text(self) -> str:
        return "\n".join(self._lines) + "\n"


def _escaped(value: str) -> str:
    """A label value as the text format quotes it: key aliases and user ids are anyone's text."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
