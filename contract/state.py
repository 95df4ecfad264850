"""The bookmark: one small JSON document saying how far the source has been copied, as
readers see it (the ETL writes it: etl/state.py)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.errors import StoreCorrupt
from contract.store import STATE_FILE

VERSION = 1


@dataclass(frozen=True)
class State:
    """Timestamps are naive, exactly as the source stores them (UTC for startTime)."""

    source: str | None = None  # host:port/database the bookmark belongs to
    cursor_column: str | None = None  # created_at | startTime
    cursor: dt.datetime | None = None  # highest cursor value copied
    start_max: dt.datetime | None = None  # highest startTime copied
    full_refresh_pending: bool = False  # a --full-refresh began and has not finished


def read_state(store: Path) -> State:
    path = store / STATE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return State()
    except (OSError, ValueError) as exc:
        raise StoreCorrupt(_unreadable(path, exc)) from None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise StoreCorrupt(_unreadable(path, "unknown format"))
    try:
        return State(
            source=data.get("source"),
            cursor_column=data.get("cursor_column"),
            cursor=_time(data.get("cursor")),
            start_max=_time(data.get("start_max")),
            full_refresh_pending=bool(data.get("full_refresh_pending", False)),
        )
    except (TypeError, ValueError) as exc:
        raise StoreCorrupt(_unreadable(path, exc)) from None


def _time(value: Any) -> dt.datetime | None:
    return None if value is None else dt.datetime.fromisoformat(value)


def _unreadable(path: Path, why: object) -> str:
    return (
        f"{path} is unreadable ({why}). Move it away and run again: the ETL then re-reads "
        "the whole source and skips every row the store already has."
    )
