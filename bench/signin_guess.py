"""How many passwords a guesser gets checked: sessions that each forge another client
address (X-Forwarded-For, which uvicorn trusts from loopback) and submit wrong passwords
all at once, round after round, as a script would.

    .venv/bin/python -m bench.signin_guess --url http://127.0.0.1:8501 --sessions 30 --seconds 60

Each round opens fresh sessions (escaping any per-session lock), submits together, and
counts the answers: "Wrong password." means the password was checked; a request to wait
means it was not. Prints the guesses checked per minute.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from dataclasses import dataclass

from bench.st_session import BrowserSession, SessionBroken
from dashboard.strings import EN


@dataclass
class Tally:
    checked: int = 0  # answered "wrong password": the server computed its hash
    held_back: int = 0  # told to wait: nothing was checked
    other: int = 0  # neither (a broken session, another answer)


async def guess_once(url: str, address: str, password: str) -> str:
    """One fresh session from `address`: open, submit `password`; what the page said."""
    browser = BrowserSession(url, headers={"X-Forwarded-For": address})
    try:
        await browser.open()
        await browser.submit({EN["signin.password"]: password}, EN["signin.submit"])
        alerts = [str(node.proto.body) for node in browser.page.of_kind("alert")]
    except SessionBroken:
        return "other"
    finally:
        await browser.close()
    if EN["signin.refused.password"] in alerts:
        return "checked"
    if any(EN["signin.wait"].split("{")[0] in alert for alert in alerts):
        return "held_back"
    return "other"


async def guess_round(url: str, sessions: int, round_no: int, tally: Tally) -> None:
    answers = await asyncio.gather(
        *(
            guess_once(url, f"198.51.{round_no % 250}.{i % 250}", f"guess-{round_no}-{i}")
            for i in range(sessions)
        )
    )
    for answer in answers:
        setattr(tally, answer, getattr(tally, answer) + 1)


async def guess_for(url: str, sessions: int, seconds: float) -> Tally:
    tally, began, round_no = Tally(), time.monotonic(), 0
    while time.monotonic() - began < seconds:
        await guess_round(url, sessions, round_no, tally)
        round_no += 1
    return tally


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", required=True)
    parser.add_argument("--sessions", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args(argv)
    began = time.monotonic()
    tally = asyncio.run(guess_for(args.url, args.sessions, args.seconds))
    minutes = (time.monotonic() - began) / 60
    guesses = tally.checked + tally.held_back + tally.other
    print(
        f"{guesses} guesses in {minutes:.1f} min from forged addresses, "
        f"{args.sessions} at once: {tally.checked} checked ({tally.checked / minutes:.1f} per minute), "
        f"{tally.held_back} held back, {tally.other} other"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
