"""Sign-in logic: password hashes, key fingerprints, who a key belongs to, slowing guesses,
one-time codes."""

from __future__ import annotations

import datetime as dt
import stat
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from dashboard import auth, one_time_code
from queries.runner import StoreReader
from tests import known_store

NOW = dt.datetime(2026, 12, 3, tzinfo=dt.UTC)


def test_a_password_hash_verifies_only_its_password() -> None:
    stored = auth.hash_password("correct horse battery")
    assert stored.startswith("scrypt$32768$8$1$") and "correct" not in stored
    assert auth.verify_password("correct horse battery", stored)
    assert not auth.verify_password("correct horse batterY", stored)
    assert not auth.verify_password("비밀번호", stored)  # non-ASCII: compared as bytes, no error
    assert auth.hash_password("same") != auth.hash_password("same")  # salted


@pytest.mark.parametrize("stored", ["", "plain-text", "scrypt$x$8$1$aa$bb", "bcrypt$1$2$3$4$5"])
def test_a_malformed_hash_matches_nothing(stored: str) -> None:
    assert not auth.verify_password("anything", stored)


def test_several_administrators() -> None:
    admins = auth.administrators(
        {
            "admins": {
                "kim": auth.hash_password("kim's password!"),
                "lee": auth.hash_password("lee's password!"),
            }
        },
        {"USAGE_ADMIN_PASSWORD_HASH": auth.hash_password("ops password!!")},
    )
    assert set(admins) == {"kim", "lee", "admin"}
    lee = auth.sign_in_admin("lee's password!", admins)
    assert lee is not None and (lee.role, lee.name) == ("admin", "lee")
    ops = auth.sign_in_admin("ops password!!", admins)
    assert ops is not None and (ops.role, ops.name) == ("admin", "admin")
    assert auth.still_admin(lee, admins)
    assert not auth.still_admin(lee, {**admins, "lee": auth.hash_password("lee's new one!")})
    assert not auth.still_admin(lee, {"kim": admins["kim"]})  # removed
    assert auth.sign_in_admin("nobody's", admins) is None
    assert auth.sign_in_admin("", {}) is None


@pytest.mark.parametrize(
    ("pasted", "valid"),
    [
        ("sk-alice", True),
        ("  sk-alice\n", True),
        ("Bearer sk-alice", True),
        ("alice", False),
        ("sk-", False),
        ("sk-al ice", False),
        ("", False),
    ],
)
def test_key_fingerprints(pasted: str, valid: bool) -> None:
    fingerprint = auth.key_hash(pasted)
    assert (fingerprint == known_store.key_of("alice")) if valid else fingerprint is None


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> StoreReader:
    return StoreReader(known_store.build(tmp_path_factory.mktemp("auth") / "store"))


def check(reader: StoreReader, name: str) -> auth.KeyCheck:
    return auth.check_key(
        known_store.key_of(name),
        lambda h: reader.run("key_lookup", key_hash=h).to_dict("records"),
        lambda user: reader.run("student_keys", user_id=user)["api_key_hash"].tolist(),
        NOW,
    )


def test_a_valid_key_brings_all_keys_of_its_owner(reader: StoreReader) -> None:
    result = check(reader, "alice-2")  # the unused second key
    assert result.problem == "ok" and result.identity is not None
    assert result.identity.name == "alice" and result.identity.role == "student"
    assert set(result.identity.keys or ()) == {known_store.key_of("alice"), known_store.key_of("alice-2")}


@pytest.mark.parametrize(
    ("name", "problem"), [("mallory", "unknown"), ("dave", "blocked"), ("carol", "expired")]
)
def test_unknown_blocked_and_expired_keys_are_refused(reader: StoreReader, name: str, problem: str) -> None:
    result = check(reader, name)
    assert (result.identity, result.problem) == (None, problem)


def test_without_a_key_list_the_requests_vouch_for_a_key(tmp_path: Path) -> None:
    """An older LiteLLM without the key table: a key that made requests is known."""
    reader = StoreReader(known_store.build(tmp_path / "store", keys=False))
    assert check(reader, "bob").problem == "ok"
    assert check(reader, "mallory").problem == "unknown"


def test_the_throttle_slows_then_locks_then_forgives() -> None:
    now = [1000.0]
    throttle = auth.Throttle(free=3, lock_after=6, lock_s=300, clock=lambda: now[0])
    waits = []
    for _ in range(5):
        throttle.failed()
        waits.append(throttle.wait())
    assert waits == [0.0, 0.0, 2.0, 4.0, 8.0]
    throttle.failed()
    assert throttle.wait() == 300.0  # locked
    now[0] += 301
    assert throttle.wait() == 0.0
    throttle.failed()
    throttle.succeeded()
    assert throttle.failures == 0 and throttle.wait() == 0.0


def gate(now: list[float], **budgets: tuple[int, float]) -> auth.SignInGate:
    return auth.SignInGate(dict(auth.DEFAULT_BUDGETS) | budgets, clock=lambda: now[0])


def test_concurrent_passwords_from_forged_addresses_are_checked_at_the_pace_only() -> None:
    """Thirty guesses at once, each from another (forged) address: the pace is taken
    before the check and under one lock, so only its burst gets checked; the next check
    waits seconds, not minutes."""
    now = [0.0]
    door = gate(now)
    start = threading.Barrier(30)

    def guess(i: int) -> auth.Ticket | float:
        start.wait()
        return door.admit("password", "admin", f"203.0.113.{i}")

    with ThreadPoolExecutor(30) as pool:
        answers = list(pool.map(guess, range(30)))
    admitted = [a for a in answers if isinstance(a, auth.Ticket)]
    assert len(admitted) == 10
    assert all(a == pytest.approx(6.0) for a in answers if not isinstance(a, auth.Ticket))
    now[0] += 5
    assert door.admit("password", "admin", "198.51.100.1") == pytest.approx(1.0)
    now[0] += 1
    assert isinstance(door.admit("password", "admin", "198.51.100.1"), auth.Ticket)  # the next one
    # an hour of flooding gets ten checks a minute
    checked = 0
    for _ in range(3600):
        now[0] += 1
        checked += isinstance(door.admit("password", "admin", f"198.51.{int(now[0]) % 250}.1"), auth.Ticket)
    assert checked == 600


def test_an_address_an_administrator_signed_in_from_keeps_its_own_turn() -> None:
    now = [0.0]
    door = gate(now)
    ticket = door.admit("password", "admin", "192.0.2.10")  # the professor's office, yesterday
    assert isinstance(ticket, auth.Ticket)
    door.succeeded(ticket)
    flood = [door.admit("password", "admin", f"203.0.113.{i}") for i in range(100)]
    assert sum(isinstance(a, auth.Ticket) for a in flood) == 10  # the pace, spent
    assert isinstance(door.admit("password", "admin", "192.0.2.10"), auth.Ticket)  # at once
    forged = [door.admit("password", "admin", "192.0.2.10") for _ in range(100)]
    assert sum(isinstance(a, auth.Ticket) for a in forged) <= 9  # forging it: a pace of its own
    for i in range(2 * auth.KNOWN_ADDRESSES):
        door.known(f"198.51.100.{i}")
    known = door.known_addresses()
    assert len(known) == auth.KNOWN_ADDRESSES and "192.0.2.10" not in known


def test_a_success_gives_its_place_back() -> None:
    now = [0.0]
    door = auth.SignInGate(clock=lambda: now[0], pace=(2, 6.0))
    for _ in range(5):
        ticket = door.admit("password", "admin", None)
        assert isinstance(ticket, auth.Ticket)
        door.succeeded(ticket)  # the professor signing in again and again costs nothing
    assert isinstance(door.admit("password", "admin", None), auth.Ticket)


def test_keys_are_checked_whatever_fails_lab_wide_and_one_address_has_its_own_budget() -> None:
    now = [0.0]
    door = gate(now)
    floods = []
    for i in range(500):
        ticket = door.admit("key", f"guess-{i}", f"10.0.{i // 250}.{i % 250}")
        assert isinstance(ticket, auth.Ticket)  # a key is cheap to check: nothing lab-wide before
        floods.append(door.failed(ticket))
    assert floods.index(True) == 59 and floods.count(True) == 1  # the 60th fills the budget: one log line
    assert isinstance(door.admit("key", "a-valid-key", "192.0.2.9"), auth.Ticket)
    assert isinstance(door.admit("password", "admin", "10.9.9.9"), auth.Ticket)
    one: list[bool] = []
    for _ in range(50):
        ticket = door.admit("key", f"from-one-{len(one)}", "192.0.2.7")
        one.append(isinstance(ticket, auth.Ticket))
        if isinstance(ticket, auth.Ticket):
            door.failed(ticket)
    assert one.count(True) == 20  # one address: 20 failures in ten minutes
    repeated = gate(now)
    same_key = sum(isinstance(repeated.admit("key", "blocked-key", None), auth.Ticket) for _ in range(20))
    assert same_key == 5  # one key tried again and again: its own budget


def test_a_one_time_code_is_kept_hashed_and_lets_in_once(tmp_path: Path) -> None:
    now = [1000.0]
    code = one_time_code.issue(tmp_path, clock=lambda: now[0])
    [stored] = tmp_path.iterdir()
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert code.replace("-", "") not in stored.read_text() and len(code.replace("-", "")) == 16
    assert not one_time_code.use("correct horse battery", tmp_path, clock=lambda: now[0])
    assert not one_time_code.use("2222-2222-2222-2222", tmp_path, clock=lambda: now[0])  # wrong: kept
    assert one_time_code.use(f" {code.lower().replace('-', ' ')} ", tmp_path, clock=lambda: now[0])
    assert not one_time_code.use(code, tmp_path, clock=lambda: now[0])  # used up
    assert list(tmp_path.iterdir()) == []
    late = one_time_code.issue(tmp_path, clock=lambda: now[0])
    now[0] += one_time_code.LIFETIME_S
    assert not one_time_code.use(late, tmp_path, clock=lambda: now[0])  # expired


def test_a_one_time_code_lets_in_one_of_many_at_once(tmp_path: Path) -> None:
    code = one_time_code.issue(tmp_path)
    start = threading.Barrier(16)

    def use(_: int) -> bool:
        start.wait()
        return one_time_code.use(code, tmp_path)

    with ThreadPoolExecutor(16) as pool:
        assert sum(pool.map(use, range(16))) == 1


def test_the_one_time_code_command_prints_a_code_the_server_takes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setenv(one_time_code.STATE_ENV, str(tmp_path / "state"))
    assert auth.main(["one-time-code"]) == 0
    code = capsys.readouterr().out.strip().splitlines()[-1]
    assert one_time_code.use(code, tmp_path / "state")
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(one_time_code.STATE_ENV, str(tmp_path / "file" / "state"))
    assert auth.main(["one-time-code"]) == 1  # cannot write there: says so
    assert "USAGE_DASHBOARD_STATE" in capsys.readouterr().err


def test_the_hash_password_command(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    answers = iter(["a long enough password", "a long enough password"])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    assert auth.main(["hash-password"]) == 0
    out = capsys.readouterr().out
    line = next(part for part in out.split('"') if part.startswith("scrypt$"))
    assert auth.verify_password("a long enough password", line)
    assert "a long enough password" not in out
    short = iter(["short"])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(short))
    assert auth.main(["hash-password"]) == 2
