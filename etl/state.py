"""The bookmark: one small JSON document saying how far the source has been copied."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from etl.errors import StoreCorrupt
from etl.files import atomic_write_bytes
from etl.store import STATE_FILE

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


def write_state(store: Path, state: State) -> None:
    data: dict[str, Any] = {"version": VERSION, **asdict(state)}
    for key in ("cursor", "start_max"):
        data[key] = data[key].isoformat() if data[key] is not None else None
    atomic_write_bytes(store / STATE_FILE, (json.dumps(data, indent=2) + "\n").encode())


def _time(value: Any) -> dt.datetime | None:
    return None if value is None else dt.datetime.fromisoformat(value)


def _unreadable(path: Path, why: object) -> str:
    return (
        f"{path} is unreadable ({why}). Move it away and run again: the ETL then re-reads "
        "the whole source and skips every row the store already has."
    )
