"""`[statements]` in usage.toml: whether a run of the ETL closes a month by itself, and
how many days after the month ended (ops/statements.py, close_due). Off by default: a lab
that corrects its key list or price book after a month closes it by hand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from settings.errors import ConfigError


@dataclass(frozen=True)
class StatementSettings:
    close_after_days: int | None = None  # None: only `python -m etl close-month` closes


def statement_settings(table: Any) -> StatementSettings:
    if not isinstance(table, dict):
        raise ConfigError("statements must be a table: [statements]")
    unknown = set(table) - {"close_after_days"}
    if unknown:
        raise ConfigError(f"unknown setting statements.{sorted(unknown)[0]}; known: close_after_days")
    days = table.get("close_after_days")
    if days is not None and (isinstance(days, bool) or not isinstance(days, int) or not 0 <= days <= 60):
        raise ConfigError(f"statements.close_after_days must be a number of days from 0 to 60, not {days!r}")
    return StatementSettings(close_after_days=days)
