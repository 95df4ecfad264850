"""Guessing against the real server: sessions forging their client address and submitting
at once get no more passwords checked than the process-wide budget allows."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bench.signin_guess import Tally, guess_once, guess_round
from tests.browser import known_store_server

PASSWORD = "correct horse battery staple"


def test_forged_addresses_and_concurrent_submissions_get_ten_passwords_checked(tmp_path: Path) -> None:
    with known_store_server(tmp_path, PASSWORD) as url:
        tally = Tally()
        for round_no in range(2):  # thirty fresh sessions at once, twice, each from another address
            asyncio.run(guess_round(url, 30, round_no, tally))
        assert (tally.checked, tally.held_back, tally.other) == (10, 50, 0)
        # the right password is not checked either until the window has slid
        assert asyncio.run(guess_once(url, "192.0.2.1", PASSWORD)) == "held_back"
