"""Load test of the dashboard with sessions that behave like people in real browsers.

Each session speaks Streamlit's own WebSocket protocol (bench/st_session.py, no browser):
it opens the page, signs in (an administrator with the password, a student with their
LiteLLM key, through the sign-in forms), then, thinking a few seconds between actions,
changes the time range, clicks a user's bar on the overview, switches what the users'
bars show and opens another page. Every action is timed from the message sent to
script_finished (opening the page: from its first HTTP request); a failure is an
exception on the page, a run that does not finish (--timeout), a broken connection, or
a page that does not show what the action should have done. A session whose connection
broke loads the page again, as a person would.

    .venv/bin/python -m bench.load_store --rows 1000000      # once: bench/out/store-1000000
    .venv/bin/python -m bench.load --store bench/out/store-1000000 --sessions 50 --ramp 10 --duration 180

With --store it serves that store itself (`streamlit run app.py`, a throwaway
administrator password); with --url it loads a running dashboard on this machine, whose
administrator password it reads from the environment variable LOAD_ADMIN_PASSWORD.
Students' pages are checked for isolation: no other person's user id may appear in
anything the page carries (texts, chart data, tables). The exit code is 1 when an action
failed or a student saw someone else's id. Times include failed actions.

Before the clock starts, one administrator signs in (not counted; --cold skips it): a
dashboard that has been up for a while holds its store in memory, one just started reads
it on its first page, which would otherwise be measured as the first sessions' time.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import ipaddress
import json
import math
import os
import random
import re
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

from bench.st_session import RUN_TIMEOUT_S, BrowserSession, SessionBroken, bar_click
from dashboard.strings import EN
from etl.store import STATE_FILE, stored_days
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


@dataclass(frozen=True)
class Visitor:
    number: int
    student: Person | None  # None: an administrator
    turn: int = 0  # the how-manieth of their role: where their first round of actions starts

    @property
    def role(self) -> str:
        return "admin" if self.student is None else "student"


def visitors(sessions: int, share: float, students: Sequence[Person], rng: random.Random) -> list[Visitor]:
    """`sessions` people, round(sessions * share) of them students, spread evenly through
    the ramp-up; each student session signs in as another student while there are any."""
    count = round(sessions * share)
    student_slots = {math.floor((k + 0.5) * sessions / count) for k in range(count)} if count else set()
    people = rng.sample(list(students), len(students))
    chosen = iter(people[i % len(people)] for i in range(sessions))
    result: list[Visitor] = []
    for n in range(sessions):
        student = next(chosen) if n in student_slots else None
        turn = sum(1 for v in result if (v.student is None) == (student is None))
        result.append(Visitor(n, student, turn))
    return result


# --- what is recorded -------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    kind: str
    role: str
    session: int
    at: float  # seconds since the test began
    seconds: float
    error: str | None


@dataclass
class Recorder:
    samples: list[Sample] = field(default_factory=list)
    violations: list[dict[str, Any]] = field(default_factory=list)
    student_pages: int = 0
    started: int = 0
    signed_in: int = 0
    reloads: int = 0
    alive: int = 0
    peak_alive: int = 0
    warm_up: str = "none"
    wall_s: float = 0.0
    cpu_s: float = 0.0  # the load generator's own CPU time, to see it is not the bottleneck


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (the smallest value with q % of values at or below it)."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(q / 100 * len(ordered))) - 1] if ordered else math.nan


def stats(samples: Sequence[Sample]) -> dict[str, Any]:
    times = [s.seconds for s in samples]
    return {
        "count": len(samples),
        "failures": sum(1 for s in samples if s.error),
        "p50_s": percentile(times, 50),
        "p95_s": percentile(times, 95),
        "max_s": max(times, default=math.nan),
    }


# --- the test ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    url: str
    sessions: int
    ramp: float
    duration: float
    students: float
    think: tuple[float, float]
    people: str
    password: str
    timeout: float = RUN_TIMEOUT_S
    seed: int = 1
    warm_up: bool = True


@dataclass
class Test:
    plan: Plan
    everyone: frozenset[str]
    recorder: Recorder
    began: float
    deadline: float
    checks: dict[str, Isolation] = field(default_factory=dict)

    def over(self) -> bool:
        return time.monotonic() >= self.deadline

    def isolation(self, user_id: str) -> Isolation:
        if user_id not in self.checks:
            self.checks[user_id] = Isolation(user_id, self.everyone)
        return self.checks[user_id]

    async def think(self, rng: random.Random) -> None:
        pause = rng.uniform(*self.plan.think)
        await asyncio.sleep(max(0.0, min(pause, self.deadline - time.monotonic())))


async def run(plan: Plan) -> Recorder:
    """All sessions, started `ramp` per second; new actions stop after `duration` seconds
    and the actions under way then are waited for."""
    rng = random.Random(plan.seed)
    students, everyone = population(plan.people)
    recorder = Recorder()
    if plan.warm_up:
        recorder.warm_up = await warm_up(plan, students[0])
    began, cpu = time.monotonic(), time.process_time()
    test = Test(plan, everyone, recorder, began, began + plan.duration)
    people = visitors(plan.sessions, plan.students, students, rng)
    starts = [v.number / plan.ramp for v in people]
    await asyncio.gather(
        *(
            _later(start, visit(test, v, random.Random(rng.random())))
            for v, start in zip(people, starts, strict=True)
            if start < plan.duration
        )
    )
    recorder.wall_s, recorder.cpu_s = time.monotonic() - began, time.process_time() - cpu
    return recorder


async def warm_up(plan: Plan, student: Person) -> str:
    """One sign-in before the clock starts, not counted: a dashboard that has been up
    for a while holds its store in memory, one just started reads it on the first page."""
    browser = BrowserSession(plan.url, timeout_s=max(plan.timeout, 120.0))
    began = time.monotonic()
    try:
        await browser.open(FIRST_QUERY)
        if plan.password:
            await browser.submit({EN["signin.password"]: plan.password}, EN["signin.submit"])
        else:
            await browser.submit({EN["signin.key"]: student.key}, EN["signin.submit"])
    except (SessionBroken, LookupError) as exc:
        return f"failed after {time.monotonic() - began:.1f} s: {exc}"
    finally:
        await browser.close()
    problems = "; ".join(browser.errors)
    return f"{time.monotonic() - began:.1f} s" + (f" ({problems})" if problems else "")


async def _later(delay: float, work: Awaitable[None]) -> None:
    await asyncio.sleep(delay)
    await work


async def visit(test: Test, visitor: Visitor, rng: random.Random) -> None:
    """One person for the whole test; when their page breaks, they load it again."""
    rec = test.recorder
    rec.started += 1
    rec.alive += 1
    rec.peak_alive = max(rec.peak_alive, rec.alive)
    try:
        while not test.over():
            browser = BrowserSession(test.plan.url, timeout_s=test.plan.timeout)
            try:
                await _use(test, visitor, browser, rng)
            except SessionBroken:
                rec.reloads += 1
            finally:
                await browser.close()
            await test.think(rng)
    finally:
        rec.alive -= 1


async def _use(test: Test, visitor: Visitor, browser: BrowserSession, rng: random.Random) -> None:
    if not await act(test, visitor, browser, "open", lambda: _open(browser)):
        return
    await test.think(rng)
    if test.over():
        return
    if not await act(test, visitor, browser, "signin", functools.partial(_sign_in, test, visitor, browser)):
        return
    test.recorder.signed_in += 1
    kinds = ADMIN_ACTIONS if visitor.student is None else STUDENT_ACTIONS
    # The first round starts at another action for each person of a role, so that even
    # a short test sees every kind; later rounds are shuffled.
    deck = [kinds[(visitor.turn + i) % len(kinds)] for i in range(len(kinds))]
    while True:
        await test.think(rng)
        if test.over():
            return
        kind = next_action(deck, kinds, lambda k: available(browser, k), rng)
        if kind is None:  # the page offers none of this person's actions: they reload it
            await act(test, visitor, browser, "stuck", lambda: _nothing_to_do(browser))
            return
        await act(test, visitor, browser, kind, functools.partial(ACTIONS[kind], browser, rng))


Step = Callable[[], Awaitable[tuple[float, str | None]]]


async def act(test: Test, visitor: Visitor, browser: BrowserSession, kind: str, step: Step) -> bool:
    """Do one action, record its time and what went wrong; check a student's page."""
    browser.errors = []  # an action that fails before it sends anything has no run's errors
    began = time.monotonic()
    try:
        seconds, problem = await step()
    except SessionBroken as exc:
        _record(test, visitor, kind, began=began, seconds=time.monotonic() - began, error=str(exc))
        raise
    except LookupError as exc:  # what the person meant to use is not on the page
        seconds, problem = time.monotonic() - began, str(exc)
    problems = [*browser.errors, *([problem] if problem else [])]
    _record(test, visitor, kind, began=began, seconds=seconds, error="; ".join(problems) or None)
    if visitor.student is not None:
        _check_isolation(test, visitor, browser, kind)
    return not problems


def _record(
    test: Test, visitor: Visitor, kind: str, *, began: float, seconds: float, error: str | None
) -> None:
    sample = Sample(kind, visitor.role, visitor.number, began - test.began, seconds, error)
    test.recorder.samples.append(sample)


def _check_isolation(test: Test, visitor: Visitor, browser: BrowserSession, kind: str) -> None:
    assert visitor.student is not None
    test.recorder.student_pages += 1
    found = test.isolation(visitor.student.user_id).leaks(browser.page.text())
    if found:
        test.recorder.violations.append(
            {"session": visitor.number, "student": visitor.student.user_id, "after": kind, "found": found}
        )


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


def available(browser: BrowserSession, kind: str) -> bool:
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


# --- the actions ------------------------------------------------------------------------


async def _open(browser: BrowserSession) -> tuple[float, str | None]:
    seconds = await browser.open(FIRST_QUERY)
    if not browser.page.has("text_input", label=EN["signin.key"]):
        return seconds, "the sign-in page did not show"
    return seconds, None


async def _sign_in(test: Test, visitor: Visitor, browser: BrowserSession) -> tuple[float, str | None]:
    if visitor.student is None:  # the "Administrator" tab: a click the server never sees
        fields = {EN["signin.password"]: test.plan.password}
    else:
        fields = {EN["signin.key"]: visitor.student.key}
    seconds = await browser.submit(fields, EN["signin.submit"])
    if not browser.page.has("button", label=EN["signout.button"]):
        alerts = [str(node.proto.body) for node in browser.page.of_kind("alert")]
        return seconds, f"not signed in ({'; '.join(alerts) or 'no sign-out button'})"
    return seconds, None


async def _change_range(browser: BrowserSession, rng: random.Random) -> tuple[float, str | None]:
    """The sidebar's time range: another of the last 24 hours, 7 days, 30 days."""
    node = browser.page.find("selectbox", label=EN["filters.range"])
    current = browser.widgets.states.get(node.proto.id)
    choices = [k for k, label in RANGES.items() if current is None or label != current.string_value]
    key = rng.choice(choices)
    seconds = await browser.choose(EN["filters.range"], RANGES[key])
    return seconds, _param_problem(browser, "range", None if key == "7d" else key)


async def _change_measure(browser: BrowserSession, rng: random.Random) -> tuple[float, str | None]:
    """What the users' (or a student's peers') bars show: spend, tokens or requests."""
    node = browser.page.find("button_group", label=EN["users.by"])
    current = browser.widgets.states.get(node.proto.id)
    held = list(current.string_array_value.data) if current is not None else []
    key = rng.choice([k for k, label in MEASURES.items() if [label] != held])
    seconds = await browser.segment(EN["users.by"], MEASURES[key])
    return seconds, _param_problem(browser, "by", None if key == "spend" else key)


async def _click_user(browser: BrowserSession, rng: random.Random) -> tuple[float, str | None]:
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
    seconds = await browser.select_on_chart(node, clicks[index])
    return seconds, _param_problem(browser, "highlight", None if user == highlighted else user)


async def _change_page(browser: BrowserSession, rng: random.Random) -> tuple[float, str | None]:
    """Another page from the navigation; back to the first page half of the time."""
    others = _other_pages(browser)
    first = browser.pages[0].page_name
    target = first if first in others and rng.random() < 0.5 else rng.choice(others)
    seconds = await browser.goto(target)
    shown = browser.current_page()
    return seconds, None if shown == target else f"asked for page {target!r}, got {shown!r}"


async def _nothing_to_do(browser: BrowserSession) -> tuple[float, str | None]:
    kinds = sorted({node.kind for node in browser.page.nodes.values()})
    return 0.0, f"nothing to do on page {browser.current_page()!r} (it shows {', '.join(kinds)})"


ACTIONS: Final[dict[str, Callable[[BrowserSession, random.Random], Awaitable[tuple[float, str | None]]]]] = {
    "filter": _change_range,
    "measure": _change_measure,
    "highlight": _click_user,
    "page": _change_page,
}


def _figure(browser: BrowserSession) -> dict[str, Any]:
    return figure(browser.page.find("plotly_chart", key=USERS_CHART).proto.spec)


def _bars(chart: dict[str, Any]) -> list[str]:
    """The users the users' chart has a bar for (empty when it shows no data)."""
    traces = chart.get("data", [])
    if not traces:
        return []
    return [str(user) for user in traces[0].get("customdata", traces[0].get("y", []))]


def _other_pages(browser: BrowserSession) -> list[str]:
    current = browser.current_page()
    return [p.page_name for p in browser.pages if not p.is_hidden and p.page_name != current]


def _params(browser: BrowserSession) -> dict[str, list[str]]:
    return parse_qs(browser.query_string)


def _param_problem(browser: BrowserSession, name: str, expected: str | None) -> str | None:
    """The view lives in the URL: after an action its parameter must say what was done."""
    got = _params(browser).get(name, [None])[0]
    return None if got == expected else f"expected {name}={expected} in the URL, got {name}={got}"


# --- the report -------------------------------------------------------------------------


def summary(plan: Plan, rec: Recorder) -> dict[str, Any]:
    failures = [s for s in rec.samples if s.error]
    kinds = [k for k in KINDS if any(s.kind == k for s in rec.samples)]
    return {
        "plan": {k: v for k, v in asdict(plan).items() if k != "password"},
        "actions": {k: stats([s for s in rec.samples if s.kind == k]) for k in kinds},
        "overall": stats(rec.samples),
        "failures": {
            "count": len(failures),
            "first": [_failure_text(s) for s in failures[:5]],
        },
        "sessions": {
            "started": rec.started,
            "signed_in": rec.signed_in,
            "reloads_after_broken_page": rec.reloads,
            "peak_concurrent": rec.peak_alive,
        },
        "isolation": {"student_pages_checked": rec.student_pages, "violations": rec.violations},
        "generator": {
            "warm_up": rec.warm_up,
            "wall_s": rec.wall_s,
            "cpu_s": rec.cpu_s,
            "actions_per_s": len(rec.samples) / rec.wall_s if rec.wall_s else 0.0,
        },
    }


def _failure_text(s: Sample) -> str:
    return f"{s.kind} (session {s.session}, {s.role}, {s.at:.1f} s in): {s.error}"


def render(report: dict[str, Any]) -> str:
    plan = report["plan"]
    lines = [
        f"Load test: {plan['sessions']} sessions ({round(plan['sessions'] * plan['students'])} students), "
        f"ramp {plan['ramp']:g}/s, {plan['duration']:g} s, "
        f"think {plan['think'][0]:g}-{plan['think'][1]:g} s, {plan['url']}",
        "",
        "| action | count | failed | p50 | p95 | max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    rows = [*report["actions"].items(), ("all", report["overall"])]
    lines += [
        f"| {kind} | {s['count']} | {s['failures']} | "
        f"{s['p50_s']:.2f} s | {s['p95_s']:.2f} s | {s['max_s']:.2f} s |"
        for kind, s in rows
    ]
    failures, sessions, isolation = report["failures"], report["sessions"], report["isolation"]
    lines += ["", f"failures: {failures['count']}", *(f"  {text}" for text in failures["first"])]
    lines.append(
        f"sessions: {sessions['started']} started, {sessions['signed_in']} sign-ins, "
        f"{sessions['reloads_after_broken_page']} reloads after a broken page, "
        f"{sessions['peak_concurrent']} at once at most"
    )
    lines.append(
        f"isolation: {isolation['student_pages_checked']} student pages checked, "
        f"{len(isolation['violations'])} violations"
    )
    lines += [f"  {v}" for v in isolation["violations"][:5]]
    gen = report["generator"]
    lines.append(
        f"{gen['actions_per_s']:.1f} actions/s; the load generator used {gen['cpu_s']:.1f} s of CPU "
        f"in {gen['wall_s']:.0f} s ({100 * gen['cpu_s'] / max(gen['wall_s'], 1e-9):.0f} % of one core); "
        f"warm-up sign-in before the clock: {gen['warm_up']}"
    )
    return "\n".join(lines)


# --- the command line -------------------------------------------------------------------


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


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--url", help="a running dashboard on this machine (http://127.0.0.1:PORT)")
    target.add_argument("--store", type=Path, help="serve this store (made by the ETL) for the test")
    parser.add_argument("--config", type=Path, help="with --store: the server's configuration file")
    parser.add_argument("--sessions", type=int, default=10, help="browser sessions (default 10)")
    parser.add_argument("--ramp", type=float, default=10.0, help="sessions started per second (default 10)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--students", type=float, default=0.2, help="share of student sessions (default 0.2)")
    parser.add_argument("--think", default="3,8", help="MIN,MAX seconds between actions (default 3,8)")
    parser.add_argument(
        "--people",
        choices=("synthetic", "simulated", "year"),
        default="synthetic",
        help="who the store's students are: bench/synthetic.py's (default), etl/simulate.py's, "
        "or bench/synthetic_store.py's (year)",
    )
    parser.add_argument("--timeout", type=float, default=RUN_TIMEOUT_S, help="seconds a page may take")
    parser.add_argument("--seed", type=int, default=1, help="random seed of the scenario")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="no warm-up sign-in before the clock starts (a server just started reads its store then)",
    )
    parser.add_argument("--json", type=Path, help="also write the report as JSON to this file")
    args = parser.parse_args(argv)
    try:
        args.think = think_range(args.think)
        if args.url:
            args.url = loopback_url(args.url)
    except ValueError as exc:
        parser.error(str(exc))
    if args.store and not is_store(args.store):
        parser.error(f"{args.store}: not a store made by the ETL (no {STATE_FILE}, no requests)")
    if args.sessions < 1 or args.ramp <= 0 or args.duration <= 0 or not 0 <= args.students <= 1:
        parser.error("--sessions >= 1, --ramp > 0, --duration > 0 and 0 <= --students <= 1, please")
    if args.url and args.students < 1 and not os.environ.get(PASSWORD_ENV):
        parser.error(f"administrator sessions against --url need the password in ${PASSWORD_ENV}")
    return args


@contextmanager
def dashboard(args: argparse.Namespace) -> Iterator[tuple[str, str]]:
    """The dashboard's URL and administrator password: the given ones, or a server of
    --store started for the test with a throwaway password."""
    if args.url:
        yield args.url, os.environ.get(PASSWORD_ENV, "")
        return
    from dashboard.auth import ADMIN_HASH_ENV, hash_password
    from tests.browser import streamlit_server

    password = secrets.token_urlsafe(16)
    env = {
        "USAGE_STORE": str(args.store.resolve()),
        ADMIN_HASH_ENV: hash_password(password),
        "LITELLM_DATABASE_URL": "",  # never the ETL's source: only the store is served
        "DATABASE_URL": "",
        "USAGE_CONFIG": str(args.config.resolve()) if args.config else "",
    }
    with streamlit_server(env) as url:
        yield url, password


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with dashboard(args) as (url, password):
        plan = Plan(
            url=url,
            sessions=args.sessions,
            ramp=args.ramp,
            duration=args.duration,
            students=args.students,
            think=args.think,
            people=args.people,
            password=password,
            timeout=args.timeout,
            seed=args.seed,
            warm_up=not args.cold,
        )
        report = summary(plan, asyncio.run(run(plan)))
    print(render(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if report["failures"]["count"] or report["isolation"]["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
