"""Writing the bookmark (its format and reading: contract/state.py)."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from contract.state import VERSION, State
from contract.store import STATE_FILE
from etl.files import atomic_write_bytes


def write_state(store: Path, state: State) -> None:
    data: dict[str, Any] = {"version": VERSION, **asdict(state)}
    for key in ("cursor", "start_max"):
        data[key] = data[key].isoformat() if data[key] is not None else None
    atomic_write_bytes(store / STATE_FILE, (json.dumps(data, indent=2) + "\n").encode())
