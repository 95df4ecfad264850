"""A real Streamlit server and headless Chromium, for what only a browser shows.

Chromium comes from Debian (`apt-get install chromium`; `.ci/run` installs it) and is
driven by Playwright with `executable_path`: Playwright's own browser download is not
reachable here. A missing Chromium fails the test with what to install, never skips.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from dashboard.auth import hash_password
from state.db import STATE_ENV, STATE_URL_ENV
from tests import known_store

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = REPO / "test-artifacts"
# Logs of servers stopped without an error, until their test's outcome is known: a green
# run leaves no artifacts, a failed test keeps its log beside its screenshot. A log whose
# `with` block raised is kept at once. tests/conftest.py settles them after each test.
stopped_logs: list[Path] = []


def settle_logs(*, failed: bool) -> None:
    """Delete the logs of the servers a passed test stopped; keep a failed test's."""
    if not failed:
        for log in stopped_logs:
            log.unlink(missing_ok=True)
    stopped_logs.clear()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def streamlit_server(env: dict[str, str], *args: str) -> Iterator[str]:
    """`streamlit run app.py` on a free loopback port; yields its URL once healthy. Its
    state (sessions, sign-in budgets) is a folder of its own unless `env` names one."""
    with streamlit_process(env, *args) as (url, _):
        yield url


@contextmanager
def streamlit_process(env: dict[str, str], *args: str) -> Iterator[tuple[str, int]]:
    """streamlit_server's URL and the server's process id (for its memory)."""
    if STATE_ENV not in env and STATE_URL_ENV not in env:
        if os.environ.get(STATE_ENV):  # the test's own folder (its one-time code's)
            env = {**env, STATE_URL_ENV: ""}
        else:
            with (
                tempfile.TemporaryDirectory(prefix="dashboard-state-") as state,
                streamlit_process({**env, STATE_ENV: state, STATE_URL_ENV: ""}, *args) as served,
            ):
                yield served
            return
    port = free_port()
    command = [
        *(sys.executable, "-m", "streamlit", "run", "app.py"),
        *("--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1"),
        *("--browser.gatherUsageStats", "false"),
        *args,
    ]
    with serve_process(command, env, port) as served:
        yield served


@contextmanager
def store_server(store: Path, password: str) -> Iterator[str]:
    """The dashboard over `store`, in Seoul, with `password` for the administrators;
    yields its URL."""
    env = {
        "USAGE_STORE": str(store),
        "USAGE_TIMEZONE": "Asia/Seoul",
        "USAGE_ADMIN_PASSWORD_HASH": hash_password(password),
    }
    with streamlit_server(env) as url:
        yield url


@contextmanager
def known_store_server(tmp_path: Path, password: str) -> Iterator[str]:
    """The dashboard over tests/known_store.py's store (built under `tmp_path`)."""
    with store_server(known_store.build(tmp_path / "store"), password) as url:
        yield url


def sign_in_as_administrator(page: Any, password: str, texts: Mapping[str, str], charts: int = 0) -> None:
    """Through the sign-in form's administrator tab, labelled by `texts` (a language's
    catalogue), as a person would; returns once the page and `charts` charts are drawn."""
    wait_until_rendered(page)
    page.get_by_role("tab", name=texts["signin.admin"]).click()
    page.get_by_role("textbox", name=texts["signin.password"]).fill(password)
    page.locator("[data-testid='stForm']").nth(1).get_by_role("button", name=texts["signin.submit"]).click()
    page.wait_for_selector("[data-testid='stMetric']", timeout=60_000)
    wait_until_rendered(page, charts=charts)


def wait_healthy(url: str, proc: subprocess.Popen[Any], seconds: float) -> bool:
    """Whether the Streamlit server at `url` (the process `proc`) answers its health check
    within `seconds`; False as soon as the process has ended."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:  # noqa: S310
                if answer.status == 200:
                    return True
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.3)


@contextmanager
def serve(command: list[str], env: dict[str, str], port: int, start_s: float = 60) -> Iterator[str]:
    """Run `command` (which serves the app on `port`) until the health endpoint answers;
    yields the URL and stops the command and everything it started. Its output goes to
    test-artifacts/streamlit-<port>.log (see `stopped_logs` for when it is deleted)."""
    with serve_process(command, env, port, start_s) as (url, _):
        yield url


@contextmanager
def serve_process(
    command: list[str], env: dict[str, str], port: int, start_s: float = 60
) -> Iterator[tuple[str, int]]:
    """serve's URL and the process id of `command`."""
    log = ARTIFACTS / f"streamlit-{port}.log"
    ARTIFACTS.mkdir(exist_ok=True)
    clean = False
    with log.open("w") as out:
        proc = subprocess.Popen(
            command,
            cwd=REPO,
            env={**os.environ, **env},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: `make run` starts streamlit as a child
        )
        url = f"http://127.0.0.1:{port}"
        try:
            if not wait_healthy(url, proc, start_s):
                pytest.fail(f"{' '.join(command)} did not serve; its log:\n{log.read_text()}")
            yield url, proc.pid
            clean = True
        finally:
            stop_group(proc)
    if clean:
        stopped_logs.append(log)


def stop_group(proc: subprocess.Popen[Any]) -> None:
    """Stop a process started with start_new_session and everything it started: SIGTERM,
    then SIGKILL after 10 s."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


SNIPPET = REPO / "deploy" / "nginx-usage.conf"
UPSTREAMS = REPO / "deploy" / "nginx-usage-upstream.conf"
SERVER_LINE = re.compile(r"^\s*server 127\.0\.0\.1:85\d\d;\n", re.MULTILINE)
# nginx's access log, when asked for: which process served which route cookie's request
ROUTE_LOG = "$upstream_addr $usage_route $request_method $uri"


@contextmanager
def nginx(tmp_path: Path, *upstreams: str, access_log: Path | None = None) -> Iterator[str]:
    """nginx serving deploy/'s two files (the processes they name replaced by
    `upstreams`) on a free loopback port; yields its URL. Each answer says which process
    served it (X-Upstream, for the tests only); `access_log` gets a ROUTE_LOG line per
    request (a WebSocket's when it closes)."""
    binary = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if binary is None:
        pytest.fail("nginx is missing: .ci/run installs Debian's nginx-light")
    snippet = SNIPPET.read_text(encoding="utf-8")
    tmp_path.mkdir(parents=True, exist_ok=True)
    assert "location / {" in snippet
    test_header = "location / {\n    add_header X-Upstream $upstream_addr always;"
    (tmp_path / "usage.conf").write_text(snippet.replace("location / {", test_header), encoding="utf-8")
    named = UPSTREAMS.read_text(encoding="utf-8")
    assert len(SERVER_LINE.findall(named)) == 2
    servers = "".join(f"    server {upstream};\n" for upstream in upstreams)
    (tmp_path / "upstream.conf").write_text(
        SERVER_LINE.sub("", named).replace("consistent;\n", "consistent;\n" + servers, 1), encoding="utf-8"
    )
    port = free_port()
    temp = {name: tmp_path / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir()
    logging = "access_log off;"
    if access_log:
        logging = f"log_format route '{ROUTE_LOG}';\n    access_log {access_log} route;"
    (tmp_path / "nginx.conf").write_text(
        f"""daemon off;
pid {tmp_path}/nginx.pid;
error_log {tmp_path}/error.log;
events {{}}
http {{
    {logging}
    client_body_temp_path {temp["body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
    include {tmp_path}/upstream.conf;
    server {{
        listen 127.0.0.1:{port};
        include {tmp_path}/usage.conf;
    }}
}}
""",
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [binary, "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path), "-e", str(tmp_path / "error.log")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2):
                    break
            except urllib.error.HTTPError:
                break  # nginx answers (the upstream may say 404): it is up
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    output = proc.stdout.read().decode() if proc.stdout else ""
                    pytest.fail(f"nginx did not start: {output}")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGQUIT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def chromium(**context: Any) -> Iterator[Any]:
    """A Playwright page in Debian's headless Chromium."""
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            # in a context of its own: `page.context.new_page()` is a new tab with its cookies
            yield browser.new_context(**context).new_page()
        finally:
            browser.close()


def wait_until_rendered(page: Any, charts: int = 0, timeout_ms: int = 60_000) -> None:
    """The script has finished and `charts` Plotly charts have drawn."""
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']", timeout=timeout_ms)
    if charts:
        drawn = "document.querySelectorAll(\"[data-testid='stPlotlyChart'] .js-plotly-plot\").length"
        page.wait_for_function(f"{drawn} >= {charts}", timeout=timeout_ms)


def chart_data(page: Any, key: str) -> list[dict[str, Any]]:
    """The traces a keyed st.plotly_chart currently draws."""
    data: list[dict[str, Any]] = page.evaluate(
        f"JSON.parse(JSON.stringify(document.querySelector('.st-key-{key} .js-plotly-plot').data))"
    )
    return data


# Every table on show: its headers and rows, from the accessible table glide-data-grid
# keeps beside its canvas (the cells themselves are drawn, not written; the accessible
# table holds the values, not the text drawn: 3800 where the cell reads 3.8 s). A table
# in a tab not chosen is not on show (display: none), and glide has not drawn it.
_TABLES = """() => [...document.querySelectorAll("[data-testid='stDataFrame'] table[aria-colcount]")]
  .filter(table => table.closest("[data-testid='stDataFrame']").checkVisibility())
  .map(table => ({
    headers: [...table.querySelectorAll('thead th')].map(th => th.textContent.trim()),
    rows: [...table.querySelectorAll('tbody tr')]
      .map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent.trim())),
  }))"""


def drawn_tables(page: Any, at_least: int = 1) -> list[dict[str, Any]]:
    """The tables on show (headers, rows; not those of a tab not chosen), once `at_least`
    are on the page (a first visit loads the grid's code after the rest of the page: the
    script may be done and the charts drawn with no table there yet) and glide has drawn
    each (it does once it is on the screen)."""
    present = "document.querySelectorAll(\"[data-testid='stDataFrame']\").length"
    page.wait_for_function(f"{present} >= {at_least}", timeout=60_000)
    frames = page.locator("[data-testid='stDataFrame']:visible")
    for index in range(frames.count()):
        frames.nth(index).scroll_into_view_if_needed()
        frames.nth(index).locator("table[aria-colcount] tbody tr").first.wait_for(state="attached")
    found: list[dict[str, Any]] = page.evaluate(_TABLES)
    return found


def open_tab(page: Any, label: str) -> None:
    """Choose the tab labelled `label` (st.tabs), as a person does, and wait until it is
    the chosen one and its charts are drawn."""
    page.get_by_role("tab", name=label, exact=True).click()
    page.get_by_role("tab", name=label, exact=True, selected=True).wait_for(timeout=10_000)
    # its charts drawn to the width they now have (hidden, they had none)
    shown = "[...document.querySelectorAll('.js-plotly-plot')].filter(plot => plot.checkVisibility())"
    page.wait_for_function(f"{shown}.every(plot => plot.getBoundingClientRect().width > 0)", timeout=10_000)
