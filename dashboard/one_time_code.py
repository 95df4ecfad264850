"""The administrators' way in that no flood can close: a single-use code printed on the
server (`python -m dashboard.auth one-time-code`) and typed into the password field.

Only its sha256 is kept, with its expiry, in a file of the dashboard's state folder (mode
0600), so the command and the server's processes on one host share it; whoever uses it
first takes the file away (a rename: one winner), so it lets in one session only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path

from state.db import STATE_ENV, state_folder

__all__ = ["STATE_ENV", "issue", "normalize", "state_folder", "use"]

CODE_FILE = "one-time-code.json"
LIFETIME_S = 600.0
# 16 characters of 31 (no 0/O, 1/I/L): 79 bits, beyond guessing in ten minutes at any
# rate, so the code needs no budget of its own and is checked before any
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
LENGTH = 16


def issue(folder: Path, clock: Callable[[], float] = time.time) -> str:
    """A new code, valid for LIFETIME_S, replacing any earlier one; returns its text (the
    only time it exists in the clear: the caller prints it and forgets it)."""
    code = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    record = json.dumps({"sha256": _digest(code), "expires": clock() + LIFETIME_S})
    staged = folder / f".{CODE_FILE}.{secrets.token_hex(8)}"
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(record)
        out.flush()
        os.fsync(out.fileno())
    staged.replace(folder / CODE_FILE)
    return "-".join(code[i : i + 4] for i in range(0, LENGTH, 4))


def use(typed: str, folder: Path, clock: Callable[[], float] = time.time) -> bool:
    """Whether `typed` is the pending code, unexpired; if so it is used up. Cheap (a file
    read and a sha256) and constant-time in what it compares."""
    code = normalize(typed)
    if code is None:
        return False
    path = folder / CODE_FILE
    if not _matches(path, code, clock):
        return False
    claimed = folder / f".{CODE_FILE}.used-{secrets.token_hex(8)}"
    try:
        path.rename(claimed)  # atomic: of two sessions typing it at once, one wins
    except FileNotFoundError:
        return False
    try:
        # the file renamed may be a newer code issued in between: that one is not this code
        return _matches(claimed, code, clock)
    finally:
        claimed.unlink(missing_ok=True)


def normalize(typed: str) -> str | None:
    """The code as issued, whatever the case, spaces or dashes; None for text that is not
    shaped like one (a password, most likely)."""
    code = "".join(typed.split()).replace("-", "").upper()
    if len(code) != LENGTH or any(c not in ALPHABET for c in code):
        return None
    return code


def _matches(path: Path, code: str, clock: Callable[[], float]) -> bool:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        digest, expires = str(record["sha256"]), float(record["expires"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return hmac.compare_digest(digest.encode(), _digest(code).encode()) and clock() < expires


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode("ascii")).hexdigest()
