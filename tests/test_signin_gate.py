"""A sign-in flood against the real server: sessions forging their client address submit
wrong passwords and junk keys without pause, far faster than the lab-wide budgets; a valid
key, the right password (from an address the professor signed in from before) and a
one-time code (printed by the real command) still get in, and the number of passwords
checked (scrypt) stays bounded."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.signin_guess import run_flood
from dashboard import auth, one_time_code
from tests.browser import REPO, known_store_server

PASSWORD = "correct horse battery staple"


def printed_code(state: Path) -> str:
    """`python -m dashboard.auth one-time-code`, run as the operator would on the server."""
    result = subprocess.run(
        [sys.executable, "-m", "dashboard.auth", "one-time-code"],
        cwd=REPO,
        env={**os.environ, one_time_code.STATE_ENV: str(state)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


def test_a_flood_from_forged_addresses_leaves_a_valid_key_the_right_password_and_a_one_time_code_a_way_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv(one_time_code.STATE_ENV, str(state))
    with known_store_server(tmp_path, PASSWORD) as url:
        code = printed_code(state)
        # the right credentials start once the flood has made more attempts than the old
        # lab-wide budgets allowed in ten minutes (60 failed keys, 10 failed passwords)
        flood = asyncio.run(
            run_flood(
                url,
                sessions=4,
                seconds=60,
                key="sk-alice",
                password=PASSWORD,
                code=code,
                after_keys=70,
                until_in=True,
                new_address=False,
            )
        )
    burst, every_s = auth.PASSWORD_PACE
    # ten times the lab-wide rates, or more: passwords against the pace of scrypt checks,
    # keys against the old lab-wide budget of failed keys (60 in ten minutes)
    assert flood.tally.passwords / flood.minutes >= 10 * 60 / every_s
    assert flood.tally.keys / flood.minutes >= 10 * 6
    key, password, by_code = flood.arrivals
    for arrival in (key, password):  # from the professor's office: an address known to the gate
        assert arrival.got_in is not None and arrival.started is not None, arrival.summary()
        assert arrival.got_in - arrival.started < 10, arrival.summary()
    assert by_code.got_in is not None and by_code.tries == 1, by_code.summary()
    assert flood.tally.other == 0
    # every junk key was looked up and refused; the passwords were checked at the pace only
    assert flood.tally.refused == flood.tally.keys
    # (one pace for the flood, one for the addresses administrators signed in from)
    assert flood.tally.checked <= burst + flood.minutes * 60 / every_s + 1
