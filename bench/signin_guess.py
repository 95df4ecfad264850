"""A sign-in flood, and whether the right credentials still get in: sessions that each
forge another client address (X-Forwarded-For, which uvicorn trusts from loopback) submit
wrong passwords and junk keys without pause, as a script would; meanwhile a student with a
valid key, the professor with the right password (from the address they signed in from
before the flood, and from a new one) and (with --code-state) with a one-time code try to
sign in, again every --retry seconds until they are in.

    .venv/bin/python -m bench.signin_guess --url http://127.0.0.1:8501 --sessions 8 --seconds 60 \\
        --password '...' --key sk-... --code-state .dashboard-state

The right credentials start once the flood has made --after-keys key and --after-passwords
password attempts (by default more than the old lab-wide budgets allowed in ten minutes).
Every session is fresh (escaping any per-session lock). "Wrong password." means the
password was checked (one scrypt); a request to wait means it was not. Prints the flood's
rates, the scrypt checks per minute and how long each right credential took to get in.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bench.st_session import BrowserSession, SessionBroken
from dashboard import one_time_code
from dashboard.strings import EN

Outcome = Literal["in", "checked", "refused", "held_back", "other"]
KNOWN_ADDRESS = "192.0.2.10"
WAIT = re.compile(re.escape(EN["signin.wait"].split("{")[0]) + r"(\d+)")


@dataclass
class Tally:
    checked: int = 0  # answered "wrong password": the server computed its hash
    refused: int = 0  # a key looked up and refused
    held_back: int = 0  # told to wait: nothing was checked
    other: int = 0  # neither (a broken session, another answer)
    passwords: int = 0  # attempts made, by kind
    keys: int = 0


@dataclass
class Arrival:
    """A right credential's way in: when it first tried, when it got in (None: never)."""

    name: str
    started: float | None = None
    got_in: float | None = None
    tries: int = 0
    told_wait: int | None = None  # the last wait the page asked for

    def summary(self) -> str:
        if self.started is None:
            return f"{self.name}: never tried"
        if self.got_in is None:
            told = f", told to wait {self.told_wait} s" if self.told_wait is not None else ""
            return f"{self.name}: not in after {self.tries} tries{told}"
        return f"{self.name}: in after {self.got_in - self.started:.1f} s ({self.tries} tries)"


@dataclass
class Flood:
    tally: Tally = field(default_factory=Tally)
    arrivals: list[Arrival] = field(default_factory=list)
    began: float = 0.0
    ended: float = 0.0

    @property
    def minutes(self) -> float:
        return max(self.ended - self.began, 1e-9) / 60


async def sign_in_once(
    url: str, address: str, *, password: str | None = None, key: str | None = None
) -> tuple[Outcome, int | None]:
    """One fresh session from `address`: open, submit a password or a key; what the page
    said, and the wait it asked for if any."""
    browser = BrowserSession(url, headers={"X-Forwarded-For": address})
    try:
        await browser.open()
        if key is not None:
            await browser.submit({EN["signin.key"]: key}, EN["signin.submit"])
        else:
            await browser.submit({EN["signin.password"]: password or ""}, EN["signin.submit"])
        if browser.page.has("button", label=EN["signout.button"]):
            return "in", None
        alerts = [str(node.proto.body) for node in browser.page.of_kind("alert")]
    except SessionBroken:
        return "other", None
    finally:
        await browser.close()
    waits = [int(m.group(1)) for alert in alerts if (m := WAIT.search(alert))]
    if waits:
        return "held_back", max(waits)
    if EN["signin.refused.password"] in alerts:
        return "checked", None
    if EN["signin.refused.unknown"] in alerts:
        return "refused", None
    return "other", None


async def guess_once(url: str, address: str, password: str) -> str:
    """One wrong (or right) password from a fresh session: "checked", "held_back", ..."""
    return (await sign_in_once(url, address, password=password))[0]


async def flood_worker(url: str, worker: int, flood: Flood, stop: asyncio.Event) -> None:
    n = 0
    while not stop.is_set():
        n += 1
        address = f"10.{worker}.{(n // 250) % 250}.{n % 250}"
        if n % 2:
            flood.tally.passwords += 1
            outcome, _ = await sign_in_once(url, address, password=f"guess-{worker}-{n}")
        else:
            flood.tally.keys += 1
            outcome, _ = await sign_in_once(url, address, key=f"sk-junk-{worker}-{n}")
        setattr(flood.tally, outcome, getattr(flood.tally, outcome) + 1)


async def arrive(
    url: str, arrival: Arrival, address: str, fields: dict[str, str], *, retry_s: float, stop: asyncio.Event
) -> None:
    """Tries until in (or the flood ends), a fresh session each time."""
    arrival.started = time.monotonic()
    while not stop.is_set():
        arrival.tries += 1
        outcome, wait = await sign_in_once(url, address, **fields)
        if outcome == "in":
            arrival.got_in = time.monotonic()
            return
        arrival.told_wait = wait
        await asyncio.sleep(retry_s)


async def run_flood(
    url: str,
    *,
    sessions: int,
    seconds: float,
    password: str | None = None,
    key: str | None = None,
    code: str | None = None,
    after_keys: int = 70,
    after_passwords: int = 20,
    retry_s: float = 1.0,
    until_in: bool = False,
    new_address: bool = True,
) -> Flood:
    """The flood for `seconds` (`until_in`: or until every right credential is in); the
    right credentials start after the flood's first attempts (`new_address`: the right
    password from a new address too)."""
    if password is not None:  # the professor signed in from the office before the flood
        await sign_in_once(url, KNOWN_ADDRESS, password=password)
    flood, stop = Flood(began=time.monotonic()), asyncio.Event()
    workers = [asyncio.create_task(flood_worker(url, w, flood, stop)) for w in range(sessions)]
    deadline = flood.began + seconds
    while (
        flood.tally.keys < after_keys or flood.tally.passwords < after_passwords
    ) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    who: list[tuple[str, str, dict[str, str]]] = []  # name, address, what they type
    if key is not None:
        who.append(("valid key", "192.0.2.20", {"key": key}))
    if password is not None:
        who.append(("right password, known address", KNOWN_ADDRESS, {"password": password}))
        if new_address:
            who.append(("right password, new address", "192.0.2.12", {"password": password}))
    if code is not None:
        who.append(("one-time code", "192.0.2.11", {"password": code}))
    flood.arrivals = [Arrival(name) for name, _, _ in who]
    tries = [
        arrive(url, arrival, address, fields, retry_s=retry_s, stop=stop)
        for arrival, (_, address, fields) in zip(flood.arrivals, who, strict=True)
    ]
    arrivals = asyncio.gather(*tries)
    if until_in:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(arrivals), max(deadline - time.monotonic(), 0.1))
    else:
        await asyncio.sleep(max(deadline - time.monotonic(), 0.0))
    stop.set()
    await asyncio.gather(*workers, arrivals)
    flood.ended = time.monotonic()
    return flood


def report(flood: Flood, sessions: int) -> str:
    tally, minutes = flood.tally, flood.minutes
    lines = [
        f"flood: {tally.passwords} passwords and {tally.keys} keys in {minutes:.1f} min "
        f"({tally.passwords / minutes:.0f} and {tally.keys / minutes:.0f} per minute) "
        f"from forged addresses, {sessions} at once",
        f"scrypt checks: {tally.checked} ({tally.checked / minutes:.1f} per minute); keys refused: "
        f"{tally.refused}; held back: {tally.held_back}; other: {tally.other}",
        *(arrival.summary() for arrival in flood.arrivals),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--url", required=True)
    parser.add_argument("--sessions", type=int, default=8, help="flooding sessions at once")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--password", help="the right administrator password")
    parser.add_argument("--key", help="a valid student key")
    parser.add_argument(
        "--code-state", type=Path, help="the server's USAGE_DASHBOARD_STATE: try a one-time code too"
    )
    parser.add_argument("--after-keys", type=int, default=70)
    parser.add_argument("--after-passwords", type=int, default=20)
    parser.add_argument("--retry", type=float, default=1.0, help="seconds between a right credential's tries")
    args = parser.parse_args(argv)
    flood = asyncio.run(
        run_flood(
            args.url,
            sessions=args.sessions,
            seconds=args.seconds,
            password=args.password,
            key=args.key,
            # what `python -m dashboard.auth one-time-code` prints, from the server's folder
            code=one_time_code.issue(args.code_state) if args.code_state else None,
            after_keys=args.after_keys,
            after_passwords=args.after_passwords,
            retry_s=args.retry,
        )
    )
    print(report(flood, args.sessions))
    return 0


if __name__ == "__main__":
    sys.exit(main())
