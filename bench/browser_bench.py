"""The common clicks in a real browser, timed from the input event to the moment the page
shows the new state (issue 30): sign-in, range change, highlight on and off, a page switch.

    .venv/bin/python -m bench.browser_bench --demo                       # the demo store
    .venv/bin/python -m bench.browser_bench --store bench/out/synthetic-1000000
    .venv/bin/python -m bench.browser_bench --store ... --vs /tmp/before  # and another tree

Debian's Chromium (tests/browser.py) at 1440x900, signed in as an administrator. Before
each click the page holds a MutationObserver on the whole document and a 'plotly_afterplot'
listener on every chart; the click's own event gives the start (its `timeStamp`). The
action is over once the app has run (data-test-script-state went to "running" and back to
"notRunning") and the DOM has been quiet for `QUIET_MS`; its time is the last mutation or
redraw minus the click. Not the end of the server's run: what a person waits for. Each
result is checked (the cards changed, the highlighted user's trace is drawn, ...), so that
a time can never be that of a page that had not changed yet.

`--vs TREE` serves a second checkout too (`streamlit run app.py` in that tree, with this
virtualenv, over the same store) and takes the repetitions in turns, A, B, A, B, ...: on
a shared machine the noise then hits both alike; the table gives the ratio B/A. Every
repetition signs in afresh (a new browser context: no cookie) and makes the six clicks in
order; one unmeasured round on each server first (a demo store is built by the first page
view; the Nodes page's partials of a fresh server are computed in the background).

One module because it is one benchmark script, its page instrumentation, actions and
table together.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dashboard.auth import ADMIN_HASH_ENV, hash_password
from dashboard.figures import ACCENT
from dashboard.strings import EN
from state.db import STATE_ENV, STATE_URL_ENV
from tests.browser import (
    CHROMIUM,
    CHROMIUM_ARGS,
    chart_data,
    free_port,
    stop_group,
    wait_healthy,
    wait_until_rendered,
)

REPO = Path(__file__).resolve().parent.parent
LOGS = REPO / "bench" / "out"
VIEWPORT = {"width": 1440, "height": 900}
QUIET_MS = 500  # no mutation nor redraw for this long after the run: the page is done
TIMEOUT_MS = 120_000
ACTIONS = (
    "sign-in",
    "range 7 -> 30 days",
    "range 30 -> 7 days",
    "highlight on",
    "highlight off",
    "to Nodes",
    "back to Overview",
)

# Installed once per page (it survives Streamlit's reruns and page switches: one document).
# Mutations of Streamlit's own running indicator and toolbar are not the page's content.
INSTRUMENT = """() => {
  if (window.__bench) return;
  const b = window.__bench = {armed: false};
  const chrome = "[data-testid='stStatusWidget'], [data-testid='stToolbar'], [data-testid='stDecoration']";
  const seen = (t) => { if (b.armed) b.last = Math.max(b.last, t); };
  const hook = () => {
    for (const gd of document.querySelectorAll('.js-plotly-plot')) {
      if (!gd.__benchHooked && typeof gd.on === 'function') {
        gd.__benchHooked = true;
        gd.on('plotly_afterplot', () => {
          seen(performance.now());
          if (b.armed) b.afterplots++;
        });
      }
    }
  };
  new MutationObserver((records) => {
    const t = performance.now();
    hook();
    if (!b.armed || b.t0 === null) return;
    for (const r of records) {
      // the app's root by its test id, not as found when armed: a sign-in can mount it anew
      if (r.type === 'attributes' && r.attributeName === 'data-test-script-state'
          && r.target.getAttribute('data-testid') === 'stApp') {
        // by the record's old value, not the attribute's value now: a short run can
        // start and end before the observer is called (its main thread busy meanwhile),
        // and both records then read "notRunning"
        if (b.running === null) b.running = t;
        if (r.oldValue === 'running') b.finished = t;
        continue;
      }
      const el = r.target.nodeType === 1 ? r.target : r.target.parentElement;
      if (el && el.closest(chrome)) continue;
      seen(t);
      b.mutations++;
    }
  }).observe(document.body, {subtree: true, childList: true, attributes: true, attributeOldValue: true,
    characterData: true});
  for (const type of ['pointerdown', 'keydown']) {
    document.addEventListener(type, (e) => { if (b.armed && b.t0 === null) b.t0 = e.timeStamp; }, true);
  }
  hook();
}"""
ARM = """() => Object.assign(window.__bench, {armed: true, t0: null, last: 0, running: null,
  finished: null, mutations: 0, afterplots: 0})"""
DONE = f"""() => {{
  const b = window.__bench;
  const app = document.querySelector("[data-testid='stApp']");
  // the observer's records can miss a run whose app root is mounted anew meanwhile (seen
  // once in five sign-ins): the state as polled here is the second witness
  const state = app && app.getAttribute('data-test-script-state');
  const now = performance.now();
  if (b.t0 !== null && state === 'running' && b.running === null) b.running = now;
  if (b.running !== null && state === 'notRunning' && b.finished === null) b.finished = now;
  // nor is a run always seen at all (twice in 100 sign-ins, with the page drawn): charts
  // redrawn, the app idle and the page quiet is then its end (its phases read 0)
  if (b.t0 !== null && b.running === null && b.afterplots > 0 && state === 'notRunning'
      && now - b.last >= {QUIET_MS}) {{ b.running = b.t0; b.finished = b.last; }}
  return b.t0 !== null && b.finished !== null && app.getAttribute('data-test-script-state') === 'notRunning'
    && performance.now() - Math.max(b.last, b.finished) >= {QUIET_MS};
}}"""
STATE = """() => { const b = window.__bench; const app = document.querySelector("[data-testid='stApp']");
  return {...b, state: app && app.getAttribute('data-test-script-state'), now: performance.now()}; }"""
DISARM = """() => { const b = window.__bench; b.armed = false;
  return {t0: b.t0, last: b.last, running: b.running, finished: b.finished,
          mutations: b.mutations, afterplots: b.afterplots}; }"""
METRICS = "() => [...document.querySelectorAll(\"[data-testid='stMetricValue']\")].map(e => e.textContent)"
CHARTS_DRAWN = """() => [...document.querySelectorAll("[data-testid='stPlotlyChart'] .js-plotly-plot")]
  .map(gd => Boolean(gd._fullLayout) && (gd.data || []).length > 0)"""


TYPING_MS = 2000


class Invalid(Exception):
    """The page after an action does not show what the action should have shown."""


@dataclass
class Timing:
    """One action: ms from the click to the last change, and its phases."""

    total_ms: float
    running_ms: float  # the click until the app says it runs (the message reached the server)
    finished_ms: float  # the click until the run's end reached the page
    received_kb: float  # the WebSocket frames the page received meanwhile
    largest_kb: float
    mutations: int
    afterplots: int


@dataclass
class Frames:
    """What the server sent over the WebSocket since `reset`."""

    sizes: list[int] = field(default_factory=list)

    def add(self, payload: str | bytes) -> None:
        self.sizes.append(len(payload))

    def reset(self) -> None:
        self.sizes.clear()


def timed(page: Any, frames: Frames, act: Callable[[], None]) -> Timing:
    """Arm the page, do `act` (whose first pointer or key event is the start), wait until
    the page is done with it."""
    page.evaluate(INSTRUMENT)
    page.evaluate(ARM)
    frames.reset()
    act()
    try:
        page.wait_for_function(DONE, timeout=TIMEOUT_MS, polling=50)
    except Exception as exc:  # say what the page saw, not only that it took too long
        seen = page.evaluate(STATE)
        raise Invalid(f"not done after {TIMEOUT_MS} ms on {page.url}: {seen}") from exc
    b = page.evaluate(DISARM)
    if b["t0"] is None:
        raise Invalid("no pointer or key event reached the page")
    last = max(b["last"], b["finished"])
    return Timing(
        total_ms=last - b["t0"],
        running_ms=b["running"] - b["t0"],
        finished_ms=b["finished"] - b["t0"],
        received_kb=sum(frames.sizes) / 1024,
        largest_kb=max(frames.sizes, default=0) / 1024,
        mutations=b["mutations"],
        afterplots=b["afterplots"],
    )


# --- the actions ------------------------------------------------------------------------


def all_charts_drawn(page: Any, what: str) -> None:
    drawn = page.evaluate(CHARTS_DRAWN)
    if not drawn or not all(drawn):
        raise Invalid(f"{what}: charts drawn {drawn}")


def sign_in(page: Any, frames: Frames, url: str, password: str) -> Timing:
    page.goto(f"{url}/?lang=en&range=7d")
    wait_until_rendered(page, timeout_ms=TIMEOUT_MS)
    page.get_by_role("tab", name=EN["signin.admin"]).click()
    page.get_by_role("textbox", name=EN["signin.password"]).fill(password)
    # the seconds a person takes to type a password, in which the sign-in page loads the
    # next page's code (dashboard/preload.py): a submit at once timed that loading too
    page.wait_for_timeout(TYPING_MS)
    submit = page.locator("[data-testid='stForm']").nth(1).get_by_role("button", name=EN["signin.submit"])
    timing = timed(page, frames, submit.click)
    if not page.evaluate(METRICS) or page.locator(".st-key-user_chart .js-plotly-plot").count() != 1:
        raise Invalid("sign-in: no Overview (cards, users' chart) once done")
    all_charts_drawn(page, "sign-in")
    return timing


def choose_range(page: Any, frames: Frames, label: str) -> Timing:
    before = page.evaluate(METRICS)
    page.locator("[data-testid='stSidebar'] [data-testid='stSelectbox']").filter(
        has_text=EN["filters.range"]
    ).click()
    option = page.get_by_role("option", name=label, exact=True)
    option.wait_for()
    timing = timed(page, frames, option.click)
    after = page.evaluate(METRICS)
    if after == before:
        raise Invalid(f"range {label}: the cards still read {before}")
    all_charts_drawn(page, f"range {label}")
    return timing


def user_bars(page: Any) -> tuple[list[str], list[str], list[str]]:
    """The users' bars: labels, ids (customdata; '' for the folded row) and colours."""
    bars = chart_data(page, "user_chart")[0]
    labels = [str(y) for y in bars["y"]]
    ids = [(c[0] if isinstance(c, list) else c) for c in bars.get("customdata") or labels]
    colours = bars["marker"]["color"]
    colours = colours if isinstance(colours, list) else [colours] * len(labels)
    return labels, [str(i) for i in ids], [str(c) for c in colours]


def highlighted_in_tokens(page: Any, who: str) -> bool | None:
    """Whether the tokens chart draws `who`'s own trace (None: no such chart here)."""
    found: bool | None = page.evaluate(
        """(who) => { const gd = document.querySelector('.st-key-tokens .js-plotly-plot');
           return gd ? (gd.data || []).some(t => t.name === who) : null; }""",
        who,
    )
    return found


def highlight_on(page: Any, frames: Frames, turn: int) -> tuple[Timing, str]:
    """Highlight the `turn`-th user of the bars (a different one each round: the first
    highlight of a person is what the server computes, the results are then shared)."""
    _, ids, _ = user_bars(page)
    named = [i for i, who in enumerate(ids) if who]  # not the folded row ("other 180")
    index = named[turn % len(named)]
    who = ids[index]
    bar = page.locator(".st-key-user_chart g.trace.bars g.point path").nth(index)
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    if box is None:
        raise Invalid(f"highlight: no bar for {who}")

    def click() -> None:
        # Plotly's drag layer swallows element clicks: the mouse at the bar's middle, then
        # away, so that no hover label is drawn over the redrawn chart
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.move(VIEWPORT["width"] - 5, VIEWPORT["height"] - 5)

    timing = timed(page, frames, click)
    _, ids, colours = user_bars(page)
    if ids.count(who) != 1 or colours[ids.index(who)] != ACCENT or highlighted_in_tokens(page, who) is False:
        raise Invalid(f"highlight on: {who} not drawn highlighted (bars {colours})")
    all_charts_drawn(page, "highlight on")
    return timing, who


def highlight_off(page: Any, frames: Frames, who: str) -> Timing:
    clear = page.get_by_role("button", name=EN["highlight.clear"])
    clear.scroll_into_view_if_needed()
    timing = timed(page, frames, clear.click)
    _, _, colours = user_bars(page)
    if ACCENT in colours or highlighted_in_tokens(page, who):
        raise Invalid(f"highlight off: {who} still drawn highlighted")
    all_charts_drawn(page, "highlight off")
    return timing


def switch_page(page: Any, frames: Frames, name: str, path: str) -> Timing:
    link = page.get_by_role("link", name=name, exact=True)
    timing = timed(page, frames, link.click)
    where = page.evaluate("window.location.pathname")
    if not where.rstrip("/").endswith(path.rstrip("/")):
        raise Invalid(f"to {name}: the page is {where}")
    if path == "/nodes" and page.locator(".st-key-concurrency .js-plotly-plot").count() != 1:
        raise Invalid("to Nodes: no requests-in-flight chart")
    if path == "/" and page.locator(".st-key-user_chart .js-plotly-plot").count() != 1:
        raise Invalid("back to Overview: no users' chart")
    all_charts_drawn(page, f"to {name}")
    return timing


def round_of_clicks(browser: Any, url: str, password: str, turn: int) -> dict[str, Timing]:
    """A fresh browser context (no cookie): the sign-in, then the other clicks in order;
    `turn`: the round's number, which picks whom it highlights."""
    context = browser.new_context(viewport=VIEWPORT)
    try:
        page = context.new_page()
        frames = Frames()
        page.on("websocket", lambda ws: ws.on("framereceived", frames.add))
        page.set_default_timeout(TIMEOUT_MS)
        result = {"sign-in": sign_in(page, frames, url, password)}
        result["range 7 -> 30 days"] = choose_range(page, frames, EN["range.30d"])
        result["range 30 -> 7 days"] = choose_range(page, frames, EN["range.7d"])
        result["highlight on"], who = highlight_on(page, frames, turn)
        result["highlight off"] = highlight_off(page, frames, who)
        result["to Nodes"] = switch_page(page, frames, "Nodes", "/nodes")
        result["back to Overview"] = switch_page(page, frames, "Overview", "/")
        return result
    finally:
        context.close()


# --- the servers --------------------------------------------------------------------------


@contextmanager
def server(tree: Path, store: Path | None, password: str, label: str) -> Iterator[str]:
    """`streamlit run app.py` in `tree` over `store` (None: the demo, built in a folder of
    its own by the first page view); its URL. Its output goes to bench/out/browser-<label>.log."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="browser-bench-") as scratch:
        env = {
            **os.environ,
            "USAGE_STORE": str(store or Path(scratch) / "no-store"),
            "USAGE_DEMO_STORE": str(Path(scratch) / "demo-store"),
            "USAGE_TIMEZONE": "Asia/Seoul",
            ADMIN_HASH_ENV: hash_password(password),
            STATE_ENV: str(Path(scratch) / "state"),
            STATE_URL_ENV: "",
            "USAGE_CONFIG": "",
            "LITELLM_DATABASE_URL": "",
            "DATABASE_URL": "",
        }
        command = [
            *(sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"),
            *("--server.port", str(port), "--server.address", "127.0.0.1"),
            *("--browser.gatherUsageStats", "false"),
        ]
        LOGS.mkdir(parents=True, exist_ok=True)
        with (LOGS / f"browser-{label}.log").open("w") as log:
            proc = subprocess.Popen(
                command, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            url = f"http://127.0.0.1:{port}"
            try:
                if not wait_healthy(url, proc, 60):
                    raise RuntimeError(f"streamlit run app.py did not serve in {tree}: see {log.name}")
                yield url
            finally:
                stop_group(proc)


# --- the table ----------------------------------------------------------------------------


def p95(values: list[float]) -> float:
    """Interpolated between the two highest of a handful (at n=7, 0.6 of the way from the
    6th to the 7th)."""
    if len(values) < 2:
        return values[0]
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ms | {p95(values):,.0f} ms"


def print_table(runs: dict[str, list[dict[str, Timing]]], detail: bool) -> None:
    labels = list(runs)
    if len(labels) == 1:
        print("| action | median | p95 | n |")
        print("|---|---:|---:|---:|")
    else:
        a, b = labels
        print(f"| action | {a}: median | {a}: p95 | {b}: median | {b}: p95 | {b}/{a} (medians) | n |")
        print("|---|---:|---:|---:|---:|---:|---:|")
    for action in ACTIONS:
        cells = []
        for label in labels:
            totals = [run[action].total_ms for run in runs[label]]
            cells.append(summary(totals))
        row = f"| {action} | {' | '.join(cells)} |"
        if len(labels) == 2:
            medians = [statistics.median(run[action].total_ms for run in runs[label]) for label in labels]
            row += f" {medians[1] / medians[0]:.2f}x |"
        counts = sorted({len(runs[label]) for label in labels})
        n = " / ".join(str(len(runs[label])) for label in labels) if len(counts) > 1 else counts[0]
        print(f"{row} {n} |")
    if detail:
        print()
        print(
            "| tree | action | to running | to run's end | to last change | received | largest | mutations |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for label in labels:
            for action in ACTIONS:
                got = [run[action] for run in runs[label]]

                def med(pick: Callable[[Timing], float], got: list[Timing] = got) -> float:
                    return statistics.median(pick(t) for t in got)

                print(
                    f"| {label} | {action} | {med(lambda t: t.running_ms):,.0f} ms"
                    f" | {med(lambda t: t.finished_ms):,.0f} ms | {med(lambda t: t.total_ms):,.0f} ms"
                    f" | {med(lambda t: t.received_kb):,.0f} KB | {med(lambda t: t.largest_kb):,.0f} KB"
                    f" | {med(lambda t: t.mutations):,.0f} |"
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--demo", action="store_true", help="the demo store, built by the app")
    where.add_argument("--store", type=Path, help="a store, e.g. bench/out/synthetic-1000000")
    parser.add_argument("--vs", type=Path, help="another checkout to compare with (B; this tree is A)")
    parser.add_argument("-n", "--repeat", type=int, default=7, help="rounds of clicks (default 7)")
    parser.add_argument("--detail", action="store_true", help="also each action's phases and bytes")
    args = parser.parse_args()
    store = args.store.resolve() if args.store else None
    trees = {"A": REPO} | ({"B": args.vs.resolve()} if args.vs else {})
    password = secrets.token_urlsafe(12)
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            with (
                server(trees["A"], store, password, "A") as url_a,
                server(trees.get("B", REPO), store, password, "B") if "B" in trees else _none() as url_b,
            ):
                urls = {"A": url_a} | ({"B": url_b} if url_b else {})
                for label, url in urls.items():  # unmeasured: the demo's build, the first reads
                    round_of_clicks(browser, url, password, turn=0)
                    print(f"warm-up round on {label} ({trees[label]}) done", file=sys.stderr)
                runs: dict[str, list[dict[str, Timing]]] = {label: [] for label in urls}
                failed: list[str] = []
                for n in range(args.repeat):
                    # A first in odd rounds, B first in even ones: going first or second
                    # (a CPU the other tree's server has just left busy) is not one tree's
                    order = list(urls.items()) if n % 2 == 0 else list(reversed(urls.items()))
                    for label, url in order:
                        try:
                            runs[label].append(round_of_clicks(browser, url, password, turn=n + 1))
                        except Invalid as exc:  # counted and named; the other rounds stand
                            failed.append(f"round {n + 1} on {label}: {exc}")
                            print(f"round {n + 1} on {label} failed: {exc}", file=sys.stderr)
                    print(f"round {n + 1}/{args.repeat}", file=sys.stderr)
        finally:
            browser.close()
    what = "the demo store" if store is None else str(args.store)
    trees_text = ", ".join(f"{label} = {tree}" for label, tree in trees.items())
    print(
        f"Clicks in a browser: {what}, administrator, 1440x900, {trees_text}, "
        f"{os.cpu_count()} cores, {dt.date.today()}, {time.monotonic() - started:.0f} s"
    )
    print()
    print_table(runs, args.detail)
    if failed:
        print(f"\n{len(failed)} round(s) failed and are not in the table:")
        for line in failed:
            print(f"- {line}")
    return 1 if failed else 0


@contextmanager
def _none() -> Iterator[None]:
    yield None


if __name__ == "__main__":
    raise SystemExit(main())
