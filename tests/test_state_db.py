"""The dashboard's own state database (state/db.py, state/gate.py): sessions kept as
hashes, one-time tickets, sliding expiry, sign-out everywhere, the sign-in budgets shared
by processes, and failing closed. Real SQLite files (as on one host) and a real
PostgreSQL database (as for several hosts)."""

from __future__ import annotations

import secrets
import stat
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from state import db as state_db
from state.gate import PASSWORD_PACE, SignInGate, Ticket
from tests import litellm_db

DAY = 86400.0


def url_of(folder: Path) -> str:
    return state_db.state_url({state_db.STATE_ENV: str(folder)})


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh state database: a SQLite file in a state folder, or a PostgreSQL database."""
    if request.param == "sqlite":
        yield url_of(tmp_path / "state")
        return
    name = f"dashboard_state_{secrets.token_hex(4)}"
    with litellm_db.admin() as conn:
        conn.execute(f"CREATE DATABASE {name}")
    base = litellm_db.ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://", 1)
    try:
        yield f"{base}/{name}"
    finally:
        with litellm_db.admin() as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def open_one(db: state_db.StateDB, now: float, **values: object) -> tuple[str, str]:
    fields: dict[str, object] = {
        "role": "student",
        "name": "alice",
        "user_id": "alice",
        "credential": "ab" * 32,
        "store": "/var/lib/usage",
        "lifetime_s": 7 * DAY,
    }
    return db.open_session(**(fields | values), now=now)  # type: ignore[arg-type]


def test_a_ticket_becomes_a_cookie_once_and_only_hashes_are_kept(url: str) -> None:
    db = state_db.StateDB(url)
    sid, ticket = open_one(db, now=1000.0)
    assert db.exchange("not-the-ticket", 1001.0) is None
    exchanged = db.exchange(ticket, 1001.0)
    assert exchanged is not None
    token, session = exchanged
    assert session.sid == sid and session.name == "alice" and token != ticket
    assert db.exchange(ticket, 1002.0) is None  # used up
    assert db.by_token(token, 1003.0) == db.by_sid(sid, 1003.0) is not None
    assert db.by_token(token[:-1] + ("A" if token[-1] != "A" else "B"), 1003.0) is None  # tampered
    assert db.by_token("", 1003.0) is None and db.by_token("x" * 10_000, 1003.0) is None
    with db.engine.connect() as conn:  # what is stored: no ticket or token in the clear
        rows = [tuple(map(str, row)) for row in conn.execute(state_db.sessions.select())]
    assert not any(secret in value for row in rows for value in row for secret in (ticket, token))


def test_a_late_ticket_and_an_unused_session_expire_and_use_slides_the_end(url: str) -> None:
    db = state_db.StateDB(url)
    _, late = open_one(db, now=0.0)
    assert db.exchange(late, state_db.TICKET_S + 1) is None
    sid, ticket = open_one(db, now=0.0, role="admin", lifetime_s=12 * 3600.0)
    exchanged = db.exchange(ticket, 10.0)
    assert exchanged is not None
    token = exchanged[0]
    assert db.by_token(token, 11 * 3600.0) is not None  # used after 11 h: the end moves to 23 h
    assert db.by_token(token, 22 * 3600.0) is not None
    assert db.by_token(token, 22 * 3600.0 + 12 * 3600.0 + 1) is None  # then 12 h unused
    assert db.by_sid(sid, 40 * 3600.0) is None


def test_a_sign_out_ends_the_session_for_every_process(url: str) -> None:
    one, other = state_db.StateDB(url), state_db.StateDB(url)  # two processes' connections
    sid, ticket = open_one(one, now=0.0)
    exchanged = other.exchange(ticket, 1.0)
    assert exchanged is not None and one.by_token(exchanged[0], 2.0) is not None
    other.end(sid)
    assert one.by_token(exchanged[0], 3.0) is None and one.by_sid(sid, 3.0) is None


def test_the_password_pace_is_one_for_all_processes(url: str) -> None:
    """Thirty wrong passwords at once, spread over three processes' gates: the burst of
    the one lab-wide pace is checked, no more."""
    now = [0.0]
    gates = [SignInGate(clock=lambda: now[0], db=state_db.StateDB(url)) for _ in range(3)]
    start = threading.Barrier(30)

    def guess(i: int) -> Ticket | float:
        start.wait()
        return gates[i % 3].admit("password", "admin", f"203.0.113.{i}")

    with ThreadPoolExecutor(30) as pool:
        answers = list(pool.map(guess, range(30)))
    burst, every_s = PASSWORD_PACE
    assert sum(isinstance(a, Ticket) for a in answers) == burst
    now[0] += every_s
    assert isinstance(gates[1].admit("password", "admin", "198.51.100.1"), Ticket)
    assert gates[2].admit("password", "admin", "198.51.100.2") == pytest.approx(every_s)
    # an address an administrator signed in from, known to every process
    gates[0].known("192.0.2.10")
    assert isinstance(gates[2].admit("password", "admin", "192.0.2.10"), Ticket)


def test_the_sqlite_file_is_the_dashboards_users_only(tmp_path: Path) -> None:
    state_db.StateDB(url_of(tmp_path / "state"))
    for path in (tmp_path / "state").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path
    assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700


def test_a_damaged_or_unreachable_database_is_refused_never_passed(tmp_path: Path) -> None:
    damaged = tmp_path / "state"
    damaged.mkdir(mode=0o700)
    (damaged / state_db.DB_FILE).write_bytes(b"not a database at all " * 100)
    with pytest.raises(state_db.StateUnavailable) as raised:
        state_db.StateDB(url_of(damaged))
    assert "DatabaseError" in str(raised.value)
    with pytest.raises(state_db.StateUnavailable) as raised:
        state_db.StateDB("postgresql+psycopg://postgres:secret-in-url@127.0.0.1:1/none")
    assert "secret-in-url" not in str(raised.value)
    # working, then damaged under it: each use says so
    working = tmp_path / "working"
    db = state_db.StateDB(url_of(working))
    gate = SignInGate(db=db)
    db.engine.dispose()
    for path in working.iterdir():
        path.write_bytes(b"\0" * 4096)
    with pytest.raises(state_db.StateUnavailable):
        gate.admit("password", "admin", None)
    with pytest.raises(state_db.StateUnavailable):
        db.by_token("whatever", 0.0)


def test_processes_starting_together_on_a_new_database_all_open_it(tmp_path: Path) -> None:
    """Two processes' first sign-ins at once each create the tables if missing; the loser
    of that race must find them made, not refuse the sign-in (seen with 2 processes)."""
    url = url_of(tmp_path / "state")
    start = threading.Barrier(8)

    def open_db(_: int) -> bool:
        start.wait()
        return isinstance(state_db.StateDB(url), state_db.StateDB)

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(open_db, range(8)))
