"""Who is looking: administrators sign in with a password (stored only as a scrypt hash),
students with their own LiteLLM virtual key (of which only LiteLLM's sha256 is ever kept).

    python -m dashboard.auth hash-password     # prints the line for .streamlit/secrets.toml
    python -m dashboard.auth one-time-code     # a single-use administrator's sign-in code

Secrets are never logged, stored in the clear or put in a URL: a student's key is hashed
at once and the text dropped; passwords are compared as scrypt hashes, in constant time.
"""

from __future__ import annotations

import base64
import datetime as dt
import getpass
import hashlib
import hmac
import os
import secrets
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from dashboard import one_time_code
from settings.config import sha256_hex
from state.gate import DEFAULT_BUDGETS, KNOWN_ADDRESSES, PASSWORD_PACE, SignInGate, Ticket

SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**15, 8, 1  # ~60 ms here: cheap to check, costly to guess
ADMIN_HASH_ENV = "USAGE_ADMIN_PASSWORD_HASH"


@dataclass(frozen=True)
class Identity:
    """A signed-in person: an administrator sees everything, a student their own keys."""

    role: Literal["admin", "student"]
    name: str
    keys: tuple[str, ...] | None = None  # sha256 of the student's keys; None for administrators
    user_id: str | None = None
    # the store this sign-in was for: a session whose store changes (the demo's, then the
    # real one once the ETL has filled it) is signed out, never carried over
    store: str | None = None
    # a student: the sha256 of the key they signed in with; an administrator: the
    # fingerprint of the password hash they signed in with (password_fingerprint)
    key: str | None = None
    checked: object = None  # the store version that key was last found valid in


# --- administrator passwords ------------------------------------------------------------


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """`scrypt$N$r$p$salt$hash`, salt and hash in base64: safe to keep in secrets.toml."""
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, maxmem=2**26, dklen=32
    )
    return "$".join(["scrypt", str(SCRYPT_N), str(SCRYPT_R), str(SCRYPT_P), _b64(salt), _b64(digest)])


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches a `hash_password` line; a malformed line matches nothing."""
    try:
        scheme, n, r, p, salt, digest = stored.strip().split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest)
        actual = hashlib.scrypt(
            password.encode("utf-8"),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            maxmem=2**26,
            dklen=len(expected),
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual, expected)  # bytes: constant time whatever the input


def administrators(secrets_section: Mapping[str, Any], env: Mapping[str, str]) -> dict[str, str]:
    """Administrator name -> password hash, from `[auth.admins]` in .streamlit/secrets.toml
    and the environment variable USAGE_ADMIN_PASSWORD_HASH (for one "admin")."""
    admins = {str(name): str(value) for name, value in dict(secrets_section.get("admins", {})).items()}
    if env.get(ADMIN_HASH_ENV):
        admins.setdefault("admin", env[ADMIN_HASH_ENV])
    return admins


def sign_in_admin(password: str, admins: Mapping[str, str]) -> Identity | None:
    """Every configured hash is checked, so the time taken says nothing about which one."""
    matched = None
    for name, stored in admins.items():
        if verify_password(password, stored) and matched is None:
            matched = name
    if matched is None:
        return None
    return Identity(role="admin", name=matched, key=password_fingerprint(admins[matched]))


def password_fingerprint(stored: str) -> str:
    """What an administrator's session remembers of the password it was opened with: the
    sha256 of its hash line, to notice when that line is changed or removed."""
    return sha256_hex(stored.strip())


def still_admin(identity: Identity, admins: Mapping[str, str]) -> bool:
    """Whether a password sign-in still stands: the same administrator, the same password
    hash. (The demo's administrator has no password, and nothing to check.)"""
    if identity.role != "admin" or identity.key is None:
        return True
    stored = admins.get(identity.name)
    return stored is not None and hmac.compare_digest(password_fingerprint(stored), identity.key)


# --- students' keys -----------------------------------------------------------------------


@dataclass(frozen=True)
class KeyCheck:
    identity: Identity | None
    problem: Literal["ok", "format", "unknown", "blocked", "expired"]


def check_key(
    key_hash: str,
    lookup: Callable[[str], Sequence[Mapping[Any, Any]]],
    keys_of: Callable[[str], list[str]],
    now: dt.datetime,
) -> KeyCheck:
    """A student's identity from the sha256 of the key they pasted.

    `lookup(hash)` returns the store's rows for that key, `keys_of(user_id)` all the keys
    of that person (so that every key of theirs counts)."""
    rows = [
        r for r in lookup(key_hash) if hmac.compare_digest(str(r["api_key_hash"]).encode(), key_hash.encode())
    ]
    if not rows:
        return KeyCheck(None, "unknown")
    row = rows[0]
    if row.get("blocked") is True:
        return KeyCheck(None, "blocked")
    expires = row.get("expires")
    if expires is not None and not _missing(expires) and expires <= now:
        return KeyCheck(None, "expired")
    user_id = row.get("user_id") or None
    keys = tuple(sorted(set(keys_of(user_id)) | {key_hash})) if user_id else (key_hash,)
    name = user_id or row.get("key_alias") or f"key:{key_hash[:8]}"
    return KeyCheck(Identity(role="student", name=str(name), keys=keys, user_id=user_id, key=key_hash), "ok")


def key_hash(pasted: str) -> str | None:
    """LiteLLM's sha256 of a virtual key, or None for text that is not one."""
    text = pasted.strip().removeprefix("Bearer ").strip()
    if not text.startswith("sk-") or len(text) <= len("sk-") or any(c.isspace() for c in text):
        return None
    return sha256_hex(text)


__all__ = [
    "DEFAULT_BUDGETS",
    "KNOWN_ADDRESSES",
    "PASSWORD_PACE",
    "SignInGate",
    "Ticket",
]  # the gate, re-exported

# --- slowing down guesses -----------------------------------------------------------------


@dataclass
class Throttle:
    """Failed sign-ins: the first few are free, then each waits twice as long as the one
    before (at most `max_delay_s`), and after `lock_after` failures the door stays shut for
    `lock_s` seconds. `lock_after=None` never locks: it only slows down."""

    free: int = 3
    lock_after: int | None = 6
    lock_s: float = 300.0
    max_delay_s: float = 60.0
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    failures: int = 0
    blocked_until: float = 0.0

    def wait(self) -> float:
        """Seconds before the next attempt may be made (0: now)."""
        return max(0.0, self.blocked_until - self.clock())

    def failed(self) -> None:
        self.failures += 1
        if self.lock_after is not None and self.failures >= self.lock_after:
            self.blocked_until = self.clock() + self.lock_s
            self.failures = 0
        elif self.failures >= self.free:
            doublings = min(self.failures - self.free + 1, 30)
            self.blocked_until = self.clock() + min(2.0**doublings, self.max_delay_s)

    def succeeded(self) -> None:
        self.failures, self.blocked_until = 0, 0.0


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _missing(value: Any) -> bool:
    """NaT or NaN, as pandas gives an empty timestamp."""
    return bool(pd.isna(value))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["one-time-code"]:
        return _one_time_code()
    if args != ["hash-password"]:
        print("usage: python -m dashboard.auth hash-password | one-time-code", file=sys.stderr)
        return 2
    password = getpass.getpass("New administrator password: ")
    if len(password) < 12:
        print("Use at least 12 characters.", file=sys.stderr)
        return 2
    if getpass.getpass("Again: ") != password:
        print("The two passwords differ.", file=sys.stderr)
        return 2
    line = hash_password(password)
    print("Put this into .streamlit/secrets.toml (one line per administrator):\n")
    print("[auth.admins]")
    print(f'{os.environ.get("USER", "admin")} = "{line}"')
    print(f"\nor set the environment variable {ADMIN_HASH_ENV}='{line}'")
    return 0


def _one_time_code() -> int:
    """Prints a code for the administrators' sign-in form, once: the way in when
    passwords are being flooded. Whoever can run this on the server is an administrator."""
    folder = one_time_code.state_folder(os.environ)
    try:
        code = one_time_code.issue(folder)
    except OSError as exc:
        print(
            f"cannot write {folder / one_time_code.CODE_FILE}: {exc.strerror}. Run this as the "
            f"dashboard's user, with its {one_time_code.STATE_ENV}.",
            file=sys.stderr,
        )
        return 1
    minutes = round(one_time_code.LIFETIME_S / 60)
    print(f"One-time code (type it into the administrators' password field; valid {minutes} min, once):")
    print(code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
