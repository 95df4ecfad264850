"""The load test's scenario: who signs in, what they do, what counts as wrong. Locust's
users (bench/locustfile.py) play it; this module also serves a store for them.

A person opens the page, signs in (an administrator with the password, a student with
their LiteLLM key, through the sign-in forms), then, thinking a few seconds between
actions, changes the time range, clicks a user's bar on the overview, switches what the
users' bars show and opens another page. Each action is a rerun of Streamlit's WebSocket
protocol (bench/st_session.py) and returns its seconds and what the page failed to show,
if anything. Students' pages are checked for isolation: no other person's user id may
appear in anything the page carries (texts, chart data, tables).

    .venv/bin/python -m bench.synthetic_store --rows 10000000    # once: bench/out/synthetic-10000000
    .venv/bin/python -m bench.load --store bench/out/synthetic-10000000 --people year \\
        --headless -u 50 -r 10 -t 180s --csv bench/out/load-50 --html bench/out/load-50.html

With --store it serves that store itself (`streamlit run app.py`, a throwaway
administrator password in LOAD_ADMIN_PASSWORD) and runs Locust on it with every other
option. With --servers N (N > 1) it starts N such processes sharing one fresh state
folder behind nginx with deploy/'s two files (the lab's setup for several processes),
warms each one up, and points Locust at nginx; at the end it prints each process's peak
memory and how the page loads spread over them. Against a dashboard already running on
this machine, run Locust directly:

    LOAD_ADMIN_PASSWORD=... .venv/bin/locust -f bench/locustfile.py --host http://127.0.0.1:8501 ...

One module because it is the load test's one scenario and the store it is played on.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import random
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from bench.st_session import RUN_TIMEOUT_S, SessionBroken, SyncBrowserSession, Tab, bar_click
from contract.store import STATE_FILE, stored_days
from dashboard.strings import EN
from state.db import STATE_ENV, STATE_URL_ENV
from tests.plotly_json import figure

PASSWORD_ENV: Final = "LOAD_ADMIN_PASSWORD"  # noqa: S105  the variable's name, not a password
ADMIN_ACTIONS: Final = ("filter", "highlight", "measure", "page")
STUDENT_ACTIONS: Final = ("filter", "measure")  # a student has one page and no users' chart
KINDS: Final = ("open", "signin", *ADMIN_ACTIONS, "stuck")
RANGES: Final = {key: EN[f"range.{key}"] for key in ("24h", "7d", "30d")}
MEASURES: Final = {key: EN[f"users.by.{key}"] for key in ("spend", "tokens", "requests")}
USERS_CHART: Final = "user_chart"  # the overview's users chart (st.plotly_chart key)
FIRST_QUERY: Final = "lang=en"  # the labels this looks for are the English ones
SYNTHETIC_STUDENTS: Final = 40  # bench/synthetic.py: student00..student39, keys sk-key-<u>
POPULATIONS: Final = ("synthetic", "simulated", "year")
LOCUSTFILE: Final = Path(__file__).resolve().parent / "locustfile.py"


# --- who signs in -----------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    user_id: str
    key: str  # the raw LiteLLM key they paste


def population(name: str) -> tuple[tuple[Person, ...], frozenset[str]]:
    """The students of a store (with their raw keys) and every user id it holds."""
    if name == "synthetic":  # bench/synthetic.py (the ETL benchmark's databases)
        students = tuple(Person(f"student{u:02d}", f"sk-key-{u}") for u in range(SYNTHETIC_STUDENTS))
        return students, frozenset(p.user_id for p in students)
    if name == "year":  # bench/synthetic_store.py (the stores of a year, 1M to 30M requests)
        from bench import synthetic_store

        owners = range(synthetic_store.PEOPLE - synthetic_store.OWNERLESS)
        return tuple(Person(f"user{p:03d}", synthetic_store.raw_key(p, 0)) for p in owners), frozenset(
            f"user{p:03d}" for p in owners
        )
    from etl.demo import demo_key
    from etl.simulate import PEOPLE

    everyone = frozenset(p.user_id for p in PEOPLE)
    return tuple(Person(u, demo_key(u)) for u in sorted(everyone) if u != "prof.kim"), everyone


class Isolation:
    """Which other people's user ids a text names; whole ids only (student1 is not
    found in student10, minji.park not in minji.parker)."""

    def __init__(self, own: str, everyone: Iterable[str]) -> None:
        others = sorted({u for u in everyone if u != own}, key=len, reverse=True)  # longest first
        alternatives = "|".join(re.escape(u) for u in others)
        self._pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)") if others else None

    def leaks(self, text: str) -> list[str]:
        return sorted(set(self._pattern.findall(text))) if self._pattern else []


# --- what they do -----------------------------------------------------------------------


def first_round(kinds: Sequence[str], turn: int) -> list[str]:
    """The first round of a person's actions starts at another kind for each person of a
    role (`turn`: the how-manieth of their role), so that even a short test sees every kind."""
    return [kinds[(turn + i) % len(kinds)] for i in range(len(kinds))]


def next_action(
    deck: list[str], kinds: Sequence[str], offered: Callable[[str], bool], rng: random.Random
) -> str | None:
    """What the person does next: each of their kinds once per round, in a random order
    but the page change last (a round's clicks happen on the page it began on); a kind
    the page does not offer now is skipped for that round. None: nothing to do at all."""
    for _ in range(2):
        while deck:
            kind = deck.pop(0)
            if offered(kind):
                return kind
        others = [k for k in kinds if k != "page"]
        deck.extend([*rng.sample(others, len(others)), *(["page"] if "page" in kinds else [])])
    return None


def available(browser: Tab, kind: str) -> bool:
    page = browser.page
    if kind == "filter":
        return page.has("selectbox", label=EN["filters.range"])
    if kind == "highlight":
        return page.has("plotly_chart", key=USERS_CHART) and any(_bars(_figure(browser)))
    if kind == "measure":
        return page.has("button_group", label=EN["users.by"])
    if kind == "page":
        return len(_other_pages(browser)) > 0
    return False


def open_page(browser: SyncBrowserSession) -> tuple[float, str | None]:
    seconds = browser.open(FIRST_QUERY)
    if not browser.page.has("text_input", label=EN["signin.key"]):
        return seconds, "the sign-in page did not show"
    return seconds, None


def sign_in(browser: SyncBrowserSession, password: str, student: Person | None) -> tuple[float, str | None]:
    # an administrator's "Administrator" tab is a click the server never sees
    fields = {EN["signin.password"]: password} if student is None else {EN["signin.key"]: student.key}
    seconds = browser.submit(fields, EN["signin.submit"])
    if not browser.page.has("button", label=EN["signout.button"]):
        alerts = [str(node.proto.body) for node in browser.page.of_kind("alert")]
        return seconds, f"not signed in ({'; '.join(alerts) or 'no sign-out button'})"
    return seconds, None


def _change_range(browser: SyncBrowserSession, rng: random.Random) -> tuple[float, str | None]:
    """The sidebar's time range: another of the last 24 hours, 7 days, 30 days."""
    node = browser.page.find("selectbox", label=EN["filters.range"])
    current = browser.widgets.states.get(node.proto.id)
    choices = [k for k, label in RANGES.items() if current is None or label != current.string_value]
    key = rng.choice(choices)
    seconds = browser.choose(EN["filters.range"], RANGES[key])
    return seconds, _param_problem(browser, "range", None if key == "7d" else key)


def _change_measure(browser: SyncBrowserSession, rng: random.Random) -> tuple[float, str | None]:
    """What the users' (or a student's peers') bars show: spend, tokens or requests."""
    node = browser.page.find("button_group", label=EN["users.by"])
    current = browser.widgets.states.get(node.proto.id)
    held = list(current.string_array_value.data) if current is not None else []
    key = rng.choice([k for k, label in MEASURES.items() if [label] != held])
    seconds = browser.segment(EN["users.by"], MEASURES[key])
    return seconds, _param_problem(browser, "by", None if key == "spend" else key)


def _click_user(browser: SyncBrowserSession, rng: random.Random) -> tuple[float, str | None]:
    """A click on a user's bar: it highlights them, or clears the highlight if they were
    the one highlighted. The bar last clicked is not clicked again: the chart still holds
    that selection, so the browser would send nothing."""
    node = browser.page.find("plotly_chart", key=USERS_CHART)
    held = browser.widgets.states.get(node.proto.id)
    last = held.string_value if held is not None else ""
    chart = figure(node.proto.spec)
    bars = _bars(chart)
    clicks = [bar_click(chart, i) for i in range(len(bars))]
    people = [i for i, user in enumerate(bars) if user]  # not the bar of the rest, "other 180"
    index = rng.choice([i for i in people if clicks[i] != last] or people)
    user = bars[index]
    highlighted = _params(browser).get("highlight", [None])[0]
    seconds = browser.select_on_chart(node, clicks[index])
    return seconds, _param_problem(browser, "highlight", None if user == highlighted else user)


def _change_page(browser: SyncBrowserSession, rng: random.Random) -> tuple[float, str | None]:
    """Another page from the navigation; back to the first page half of the time."""
    others = _other_pages(browser)
    first = browser.pages[0].page_name
    target = first if first in others and rng.random() < 0.5 else rng.choice(others)
    seconds = browser.goto(target)
    shown = browser.current_page()
    return seconds, None if shown == target else f"asked for page {target!r}, got {shown!r}"


def nothing_to_do(browser: SyncBrowserSession) -> tuple[float, str | None]:
    kinds = sorted({node.kind for node in browser.page.nodes.values()})
    return 0.0, f"nothing to do on page {browser.current_page()!r} (it shows {', '.join(kinds)})"


ACTIONS: Final[dict[str, Callable[[SyncBrowserSession, random.Random], tuple[float, str | None]]]] = {
    "filter": _change_range,
    "measure": _change_measure,
    "highlight": _click_user,
    "page": _change_page,
}


def _figure(browser: Tab) -> dict[str, Any]:
    return figure(browser.page.find("plotly_chart", key=USERS_CHART).proto.spec)


def _bars(chart: dict[str, Any]) -> list[str]:
    """The users the users' chart has a bar for (empty when it shows no data)."""
    traces = chart.get("data", [])
    if not traces:
        return []
    return [str(user) for user in traces[0].get("customdata", traces[0].get("y", []))]


def _other_pages(browser: Tab) -> list[str]:
    current = browser.current_page()
    return [p.page_name for p in browser.pages if not p.is_hidden and p.page_name != current]


def _params(browser: Tab) -> dict[str, list[str]]:
    return parse_qs(browser.query_string)


def _param_problem(browser: Tab, name: str, expected: str | None) -> str | None:
    """The view lives in the URL: after an action its parameter must say what was done."""
    got = _params(browser).get(name, [None])[0]
    return None if got == expected else f"expected {name}={expected} in the URL, got {name}={got}"


# --- where and on what -------------------------------------------------------------------


def loopback_url(url: str) -> str:
    """The dashboard's base URL, if it is on this machine; ValueError otherwise: this
    generates load, never against someone else's server."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.scheme != "http" or not host:
        raise ValueError(f"{url}: expected http://127.0.0.1:PORT")
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise ValueError(f"{url}: not a loopback address; this only loads a dashboard on this machine")
    return f"http://{parts.netloc}"


def think_range(text: str) -> tuple[float, float]:
    low, _, high = text.partition(",")
    pair = (float(low), float(high or low))
    if not 0 <= pair[0] <= pair[1]:
        raise ValueError(f"{text}: expected MIN,MAX seconds with 0 <= MIN <= MAX")
    return pair


def is_store(path: Path) -> bool:
    """A directory the ETL wrote (else the app would quietly show its demo instead)."""
    return (path / STATE_FILE).is_file() or bool(stored_days(path))


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", type=Path, required=True, help="serve this store (made by the ETL)")
    parser.add_argument("--dashboard-config", type=Path, help="the dashboard's configuration (USAGE_CONFIG)")
    parser.add_argument(
        "--servers",
        type=int,
        default=1,
        help="dashboard processes (default 1); more than one run behind nginx with deploy/'s files",
    )
    args, locust = parser.parse_known_args(argv)
    if not is_store(args.store):
        parser.error(f"{args.store}: not a store made by the ETL (no {STATE_FILE}, no requests)")
    if args.servers < 1:
        parser.error("--servers: at least 1")
    return args, locust


def warm_up(url: str, password: str, student: Person | None, timeout_s: float) -> str:
    """One sign-in, not counted: a dashboard that has been up for a while holds its store
    in memory, one just started reads it on its first page, which would otherwise be
    measured as the first users' time. What it took, as a line for the log."""
    session = SyncBrowserSession(url, timeout_s=max(timeout_s, 120.0))
    began = time.monotonic()
    try:
        session.open(FIRST_QUERY)
        _, refused = sign_in(session, password, student)
    except (SessionBroken, LookupError) as exc:
        return f"failed after {time.monotonic() - began:.1f} s: {exc}"
    finally:
        session.close()
    problems = "; ".join([*session.errors, *([refused] if refused else [])])
    return f"{time.monotonic() - began:.1f} s" + (f" ({problems})" if problems else "")


@dataclass(frozen=True)
class Served:
    """What `serve` started: the URL Locust loads (nginx's with several processes), the
    administrator password, each process's URL and id, nginx's access log if any."""

    url: str
    password: str = field(repr=False)
    processes: tuple[tuple[str, int], ...]
    access_log: Path | None = None


@contextmanager
def serve(store: Path, config: Path | None = None, servers: int = 1) -> Iterator[Served]:
    """The dashboard over `store` (`streamlit run app.py` on free loopback ports), with a
    throwaway administrator password; several processes share one fresh state folder
    behind nginx (deploy/nginx-usage-upstream.conf and deploy/nginx-usage.conf)."""
    from dashboard.auth import ADMIN_HASH_ENV, hash_password
    from tests.browser import nginx, streamlit_process

    password = secrets.token_urlsafe(16)
    env = {
        "USAGE_STORE": str(store.resolve()),
        ADMIN_HASH_ENV: hash_password(password),
        "LITELLM_DATABASE_URL": "",  # never the ETL's source: only the store is served
        "DATABASE_URL": "",
        "USAGE_CONFIG": str(config.resolve()) if config else "",
    }
    with tempfile.TemporaryDirectory(prefix="load-") as folder, ExitStack() as stack:
        work = Path(folder)
        if servers > 1:
            env |= {STATE_ENV: str(work / "state"), STATE_URL_ENV: ""}
        processes = tuple(stack.enter_context(streamlit_process(env)) for _ in range(servers))
        if servers == 1:
            yield Served(processes[0][0], password, processes)
            return
        log = work / "access.log"
        upstreams = [url.removeprefix("http://") for url, _ in processes]
        url = stack.enter_context(nginx(work / "nginx", *upstreams, access_log=log))
        yield Served(url, password, processes, log)


def memory_mb(pid: int) -> dict[str, float]:
    """A process's peak (VmHWM) and current (VmRSS) resident memory, MB."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines()
    fields = (line.split() for line in status if line.startswith(("VmHWM:", "VmRSS:")))
    return {name.rstrip(":"): int(kb) / 1024 for name, kb, *_ in fields}


def spread(log: Path, offset: int) -> list[str]:
    """How nginx spread the page loads (GET /) after `offset` in its access log over the
    processes, and whether any browser's route cookie reached more than one of them."""
    per_process: Counter[str] = Counter()
    routes: defaultdict[str, set[str]] = defaultdict(set)
    with log.open(encoding="ascii", errors="replace") as lines:
        lines.seek(offset)
        for line in lines:
            upstream, route, method, uri = [*line.split(), "", "", "", ""][:4]
            routes[route].add(upstream)
            if method == "GET" and uri == "/":
                per_process[upstream] += 1
    strays = sum(1 for upstreams in routes.values() if len(upstreams) > 1)
    browsers = Counter(next(iter(upstreams)) for upstreams in routes.values() if len(upstreams) == 1)
    loads = ", ".join(f"{upstream} {count}" for upstream, count in sorted(per_process.items()))
    kept = ", ".join(f"{upstream} {count}" for upstream, count in sorted(browsers.items()))
    return [
        f"page loads per process: {loads or 'none'}",
        f"route cookies: {len(routes)}, served by more than one process: {strays}; per process: {kept}",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Serve --store, run Locust on it with the other options; Locust's exit code."""
    args, locust = parse_args(argv)
    with serve(args.store, args.dashboard_config, args.servers) as served:
        if args.servers > 1 and "--cold" not in locust:
            # each process reads its store on its first page: warm them all, not only the
            # one nginx would send Locust's warm-up to (one after the other: the first
            # sign-ins of processes sharing a new state folder must not race to create it)
            for url, _ in served.processes:
                outcome = warm_up(url, served.password, None, RUN_TIMEOUT_S)
                print(f"warm-up sign-in on {url}: {outcome}", flush=True)
            locust = [*locust, "--cold"]
        offset = served.access_log.stat().st_size if served.access_log else 0
        command = [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--host", served.url, *locust]
        env = os.environ | {PASSWORD_ENV: served.password}
        code = subprocess.run(command, env=env, check=False).returncode
        for url, pid in served.processes:  # before they stop
            memory = memory_mb(pid)
            peak, now = memory["VmHWM"], memory["VmRSS"]
            print(f"server {url} (pid {pid}): peak {peak:.0f} MB (VmHWM), now {now:.0f} MB (VmRSS)")
        if served.access_log is not None:  # Locust's users have closed their WebSockets: all logged
            print("\n".join(spread(served.access_log, offset)), flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
