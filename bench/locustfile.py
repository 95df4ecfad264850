"""Locust's users for the dashboard's load test: administrators and students who play
bench/load.py's scenario, each over one blocking Streamlit session (bench/st_session.py's
SyncBrowserSession; gevent's patched sockets run the other users while one waits).

    LOAD_ADMIN_PASSWORD=... .venv/bin/locust -f bench/locustfile.py --host http://127.0.0.1:8501 \\
        --headless -u 50 -r 10 -t 180s --students 0.3 --think 3,8 --people year \\
        --csv bench/out/load-50 --html bench/out/load-50.html

(`python -m bench.load --store DIR ...` serves a store and runs this with the same options.)
In Locust's statistics the request type is the action's kind (open, signin, filter,
highlight, measure, page; stuck: the page offered nothing to do), the name is who did it
(admin, student), the response time is the action's, from the message sent to the end of
the page's run (open: from the page's first HTTP request), and a failure says what went
wrong: an exception on the page, a run that did not finish within --page-timeout, a broken
connection (the person then loads the page again), a page that does not show what the
action asked for. Think time is Locust's wait between two actions. Every student page is
searched for other people's user ids; a hit is a failure of type "isolation" named "leak",
and the run exits 1 even with --exit-code-on-error 0. At the end this logs (and with --csv
writes to PREFIX_isolation.csv) how many student pages were checked.
"""

from __future__ import annotations

import csv
import logging
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from locust import User, events, task
from locust.argument_parser import LocustArgumentParser
from locust.env import Environment
from locust.runners import WorkerRunner

from bench.load import (
    ACTIONS,
    ADMIN_ACTIONS,
    PASSWORD_ENV,
    POPULATIONS,
    STUDENT_ACTIONS,
    Isolation,
    Person,
    available,
    first_round,
    loopback_url,
    next_action,
    nothing_to_do,
    open_page,
    population,
    sign_in,
    think_range,
    warm_up,
)
from bench.st_session import RUN_TIMEOUT_S, SessionBroken, SyncBrowserSession

TALLY: Final = "load_tally"  # the key of this module's counts in a worker's report
log = logging.getLogger("load")


@events.init_command_line_parser.add_listener
def _options(parser: LocustArgumentParser) -> None:
    group = parser.add_argument_group("the dashboard's load test (bench/locustfile.py)")
    group.add_argument("--students", type=float, default=0.2, help="share of student users (default 0.2)")
    group.add_argument("--think", default="3,8", help="MIN,MAX seconds between a person's actions (3,8)")
    group.add_argument(
        "--people",
        choices=POPULATIONS,
        default="synthetic",
        help="who the store's students are: bench/synthetic.py's (default), etl/simulate.py's, "
        "or bench/synthetic_store.py's (year)",
    )
    group.add_argument("--page-timeout", type=float, default=RUN_TIMEOUT_S, help="seconds a page may take")
    group.add_argument("--seed", type=int, default=1, help="random seed of the scenario")
    group.add_argument(
        "--cold",
        action="store_true",
        help="no warm-up sign-in before the users start (a server just started reads its store then)",
    )


@dataclass
class Run:
    """This process's part of the test: the settings every user reads, and what it counted."""

    students: tuple[Person, ...]
    everyone: frozenset[str]
    think: tuple[float, float]
    timeout: float
    seed: int
    password: str = field(repr=False)
    student_pages: int = 0
    leaks: int = 0
    reloads: int = 0
    started: dict[str, int] = field(default_factory=dict)  # users begun, by role
    checks: dict[str, Isolation] = field(default_factory=dict)

    def isolation(self, user_id: str) -> Isolation:
        if user_id not in self.checks:
            self.checks[user_id] = Isolation(user_id, self.everyone)
        return self.checks[user_id]

    def tally(self) -> dict[str, int]:
        return {"student_pages": self.student_pages, "leaks": self.leaks, "reloads": self.reloads}


RUN: Run | None = None


def current() -> Run:
    if RUN is None:
        raise RuntimeError("bench/locustfile.py's users run under the locust command only")
    return RUN


@events.init.add_listener
def _init(environment: Environment, **_: Any) -> None:
    """Check the options (exit with what to fix), set the roles' weights, warm up."""
    global RUN  # noqa: PLW0603  one test per process: Locust's users read it
    options = environment.parsed_options
    if options is None:
        return
    try:
        think = think_range(options.think)
        if environment.host:
            environment.host = loopback_url(environment.host)
    except ValueError as exc:
        sys.exit(f"bench/locustfile.py: {exc}")
    if options.headless and not options.run_time and not isinstance(environment.runner, WorkerRunner):
        sys.exit("bench/locustfile.py: a headless load test stops by itself: give -t (e.g. -t 180s)")
    if not 0 <= options.students <= 1:
        sys.exit("bench/locustfile.py: --students is a share, 0 to 1")
    password = os.environ.get(PASSWORD_ENV, "")
    if options.students < 1 and not password:
        sys.exit(f"bench/locustfile.py: administrators sign in with the password in ${PASSWORD_ENV}")
    students, everyone = population(options.people)
    RUN = Run(students, everyone, think, options.page_timeout, options.seed, password)
    Student.weight, Admin.weight = options.students, 1 - options.students
    if environment.host and not options.cold and not isinstance(environment.runner, WorkerRunner):
        student = None if RUN.password else RUN.students[0]
        outcome = warm_up(environment.host, RUN.password, student, RUN.timeout)
        log.info("warm-up sign-in before the users start: %s", outcome)


@events.report_to_master.add_listener
def _report(client_id: str, data: dict[str, Any]) -> None:
    run = current()
    data[TALLY] = run.tally()
    run.student_pages = run.leaks = run.reloads = 0


@events.worker_report.add_listener
def _worker_report(client_id: str, data: dict[str, Any]) -> None:
    run = current()
    tally = data.get(TALLY, {})
    run.student_pages += tally.get("student_pages", 0)
    run.leaks += tally.get("leaks", 0)
    run.reloads += tally.get("reloads", 0)


@events.quitting.add_listener
def _quitting(environment: Environment, **_: Any) -> None:
    """What the statistics do not show: the isolation check's count; a leak fails the run."""
    if RUN is None or isinstance(environment.runner, WorkerRunner):
        return
    log.info(
        "isolation: %d student pages checked, %d leaks; %d reloads after a broken page",
        RUN.student_pages,
        RUN.leaks,
        RUN.reloads,
    )
    prefix = getattr(environment.parsed_options, "csv_prefix", None)
    if prefix:
        with Path(f"{prefix}_isolation.csv").open("w", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=list(RUN.tally()))
            writer.writeheader()
            writer.writerow(RUN.tally())
    if RUN.leaks:
        environment.process_exit_code = 1


Step = Callable[[SyncBrowserSession], tuple[float, str | None]]


class Visitor(User):
    """One person for the whole test: open the page, sign in, then one action per task,
    Locust's wait_time (the think time) between them; a broken page is loaded again."""

    abstract = True
    role: ClassVar[str]
    kinds: ClassVar[tuple[str, ...]]

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        run = current()
        self.turn = run.started.get(self.role, 0)  # the how-manieth of its role
        run.started[self.role] = self.turn + 1
        # a worker of --processes has its index once it joined the master: by now
        self.worker = getattr(environment.runner, "worker_index", 0)
        self.rng = random.Random(f"{run.seed}/{self.worker}/{self.role}/{self.turn}")
        self.student: Person | None = None
        self.session: SyncBrowserSession | None = None
        # the person's browser: its cookies outlive a page (a reload keeps the proxy's
        # route cookie, so the person stays on one process behind nginx)
        self.cookies: dict[str, str] = {}
        self.signed_in = False
        self.deck: list[str] = []

    def wait_time(self) -> float:
        return self.rng.uniform(*current().think)

    def on_stop(self) -> None:
        self.leave()

    @task
    def step(self) -> None:
        run = current()
        if self.session is None:
            self.session = SyncBrowserSession(
                loopback_url(self.host or ""), timeout_s=run.timeout, cookies=self.cookies
            )
            self.signed_in = False
            if not self.act("open", open_page):
                self.leave()
        elif not self.signed_in:
            self.signed_in = self.act("signin", lambda s: sign_in(s, run.password, self.student))
            if self.signed_in:
                self.deck = first_round(self.kinds, self.turn)
            else:
                self.leave()
        else:
            session = self.session
            kind = next_action(self.deck, self.kinds, lambda k: available(session, k), self.rng)
            if kind is None:  # the page offers none of this person's actions: they reload it
                self.act("stuck", nothing_to_do)
                self.leave()
            else:
                self.act(kind, lambda s: ACTIONS[kind](s, self.rng))

    def act(self, kind: str, step: Step) -> bool:
        """Do one action, report its time and what went wrong; check a student's page."""
        session = self.session
        assert session is not None
        session.errors = []  # an action that fails before it sends anything has no run's errors
        began, received = time.monotonic(), session.received
        try:
            seconds, problem = step(session)
        except SessionBroken as exc:
            self.report(kind, time.monotonic() - began, session.received - received, str(exc))
            current().reloads += 1
            self.leave()
            return False
        except LookupError as exc:  # what the person meant to use is not on the page
            seconds, problem = time.monotonic() - began, str(exc)
        problems = "; ".join([*session.errors, *([problem] if problem else [])])
        self.report(kind, seconds, session.received - received, problems or None)
        if self.student is not None:
            self.check(kind, session)
        return not problems

    def report(self, kind: str, seconds: float, length: int, failure: str | None) -> None:
        self.environment.events.request.fire(
            request_type=kind,
            name=self.role,
            response_time=seconds * 1000,
            response_length=length,
            exception=failure,  # Locust reports a string as it is
            context={},
        )

    def check(self, kind: str, session: SyncBrowserSession) -> None:
        assert self.student is not None
        run = current()
        run.student_pages += 1
        found = run.isolation(self.student.user_id).leaks(session.page.text())
        if found:
            run.leaks += 1
            self.environment.events.request.fire(
                request_type="isolation",
                name="leak",
                response_time=0,
                response_length=0,
                exception=f"{self.student.user_id} was shown {', '.join(found)} after {kind}",
                context={},
            )

    def leave(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
        self.signed_in = False


class Admin(Visitor):
    role = "admin"
    kinds = ADMIN_ACTIONS


class Student(Visitor):
    """A student signs in with their own LiteLLM key: each as another student while
    there are any."""

    role = "student"
    kinds = STUDENT_ACTIONS

    def __init__(self, environment: Environment) -> None:
        super().__init__(environment)
        run = current()
        people = random.Random(f"{run.seed}/{self.worker}").sample(run.students, len(run.students))
        self.student = people[self.turn % len(people)]
        log.debug("student %d of worker %d signs in as %s", self.turn, self.worker, self.student.user_id)
