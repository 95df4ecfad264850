"""The administrator's first Overview over stores whose names would make a page enormous
(issue 27; bench/cardinality_store.py): ordinary data, 100,000 distinct user agents and
models from one key, two names of a megabyte. For each, a fresh `streamlit run app.py`;
one administrator opens the page and signs in, as a browser does (bench/st_session.py);
measured: seconds from the sign-in to the Overview's end (the median of three fresh
servers), the server's peak memory (VmHWM), the largest message it sent and all it sent.

    .venv/bin/python -m bench.cardinality_bench                       # this tree
    .venv/bin/python -m bench.cardinality_bench --before /tmp/before  # and an older tree

`--before` is a checkout of another commit (`git worktree add /tmp/before <commit>`): its
app is served by this virtualenv, over the same stores.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench import cardinality_store
from bench.st_session import BrowserSession, SessionBroken
from dashboard.auth import ADMIN_HASH_ENV, hash_password
from dashboard.strings import EN
from tests.browser import stop_group, wait_healthy

REPO = Path(__file__).resolve().parent.parent
TIMEOUT_S = 300.0  # a first Overview not over by then is reported as such


@dataclass(frozen=True)
class Measure:
    seconds: float | None  # None: not over within TIMEOUT_S
    peak_mb: float
    largest_mb: float
    sent_mb: float
    problem: str | None  # what the page showed instead, if anything


class Counted(BrowserSession):
    """A browser session that counts the bytes of every message the server sends."""

    def __init__(self, url: str, timeout_s: float) -> None:
        super().__init__(url, timeout_s=timeout_s)
        self.largest = 0
        self.sent = 0
        resolve = self.cache.resolve

        def counted(msg, raw):  # type: ignore[no-untyped-def]
            self.largest, self.sent = max(self.largest, len(raw)), self.sent + len(raw)
            return resolve(msg, raw)

        self.cache.resolve = counted  # type: ignore[method-assign]


async def first_overview(
    url: str, password: str, timeout_s: float = TIMEOUT_S
) -> tuple[Counted, float | None]:
    """Open the page, sign in as an administrator; the session and the seconds from the
    sign-in to the end of the Overview's run (None if it did not end in `timeout_s`)."""
    session = Counted(url, timeout_s)
    try:
        await session.open("lang=en")
        session.largest = session.sent = 0  # the sign-in page's own are not the Overview's
        try:
            seconds: float | None = await session.submit(
                {EN["signin.password"]: password}, EN["signin.submit"]
            )
        except SessionBroken:
            seconds = None
        return session, seconds
    finally:
        await session.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(tree: Path, store: Path, password: str) -> Iterator[tuple[str, int]]:
    """`streamlit run app.py` of `tree` over `store`; its URL and process id."""
    port = free_port()
    env = {
        **os.environ,
        "USAGE_STORE": str(store),
        "USAGE_TIMEZONE": "Asia/Seoul",
        ADMIN_HASH_ENV: hash_password(password),
        "USAGE_CONFIG": "",
        "LITELLM_DATABASE_URL": "",
        "DATABASE_URL": "",
    }
    command = [
        *(sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"),
        *("--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"),
    ]
    proc = subprocess.Popen(
        command,
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        if not wait_healthy(url, proc, 60):
            raise RuntimeError(f"streamlit did not start in {tree}")
        yield url, proc.pid
    finally:
        stop_group(proc)


def peak_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(tree: Path, store: Path, timeout_s: float = TIMEOUT_S) -> Measure:
    password = secrets.token_urlsafe(12)
    with server(tree, store, password) as (url, pid):
        session, seconds = asyncio.run(first_overview(url, password, timeout_s))
        problem = "; ".join(session.errors) or None
        if seconds is not None and not session.page.has("button", label=EN["signout.button"]):
            problem = problem or "not signed in"
        return Measure(seconds, peak_mb(pid), session.largest / 2**20, session.sent / 2**20, problem)


def repeated(tree: Path, store: Path, timeout_s: float, repeat: int) -> Measure:
    """The median time of `repeat` fresh servers (one, if it takes over a minute), the
    largest peak and messages: a first view on two shared cores varies by 2x."""
    runs = [measure(tree, store, timeout_s)]
    while len(runs) < repeat and runs[0].seconds is not None and runs[0].seconds < 60:
        runs.append(measure(tree, store, timeout_s))
    times = [m.seconds for m in runs]
    seconds = None if None in times else statistics.median(t for t in times if t is not None)
    return Measure(
        seconds,
        max(m.peak_mb for m in runs),
        max(m.largest_mb for m in runs),
        max(m.sent_mb for m in runs),
        next((m.problem for m in runs if m.problem), None),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="a checkout of the commit to compare with")
    parser.add_argument("--timeout", type=float, default=TIMEOUT_S)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (not of one over a minute)")
    args = parser.parse_args()
    stores = {kind: cardinality_store.build(kind) for kind in cardinality_store.KINDS}
    trees = [("before", args.before)] if args.before else []
    trees.append(("after", REPO))
    print("| data | commit | first Overview | server peak | largest message | sent |")
    print("|---|---|---:|---:|---:|---:|")
    for kind, store in stores.items():
        for label, tree in trees:
            m = repeated(tree, store, args.timeout, args.repeat)
            took = f"{m.seconds:.1f} s" if m.seconds is not None else f"not over in {args.timeout:.0f} s"
            if m.problem:
                took += f" ({m.problem[:80]})"
            sizes = f"{m.peak_mb:,.0f} MB | {m.largest_mb:,.2f} MB | {m.sent_mb:,.2f} MB"
            print(f"| {kind} | {label} | {took} | {sizes} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
