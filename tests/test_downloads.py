"""The Overview's CSV downloads in a real browser: every click on a download button gives
a whole file of what the page shows, without rerunning the page, and a name a spreadsheet
would read as a formula arrives as text.

How the button works (Streamlit 1.67, dashboard/panels/export.py `downloads`): the file is a
callable, made when clicked. A click sends a "deferred file" request over the websocket;
the server runs the callable and answers with a /media URL, which the browser then
fetches as a download. While that request is out, Streamlit's button is disabled (and
shows a spinner in place of its icon); `on_click="ignore"` means no rerun of the page.

So a person's second click counts only once the button is enabled again. Two clicks in a
row are made that way (Playwright's click waits for an enabled button), each awaited with
its own `expect_download`. A double click is faster than the request: its second click
lands on the disabled button and is dropped by Streamlit's frontend. That test is an
expected failure (strict) until the button stops being disabled for a double click.

The store is tests/known_store.py's, plus four people whose names start with = + - @,
on the Seoul day of Nov 21, 2026.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from contract.store import KEYS_FILE, USERS_FILE
from dashboard import panels
from dashboard.strings import EN
from etl.load import write_snapshot
from etl.run import ingest_rows
from queries.pages import overview
from queries.runner import StoreReader
from settings.config import Config
from tests import known_store
from tests.browser import ARTIFACTS, chromium, sign_in_as_administrator, store_server, wait_until_rendered
from tests.conftest import FAILED

PASSWORD = "correct horse battery staple"
VIEW = "/?range=custom&from=2026-11-21&to=2026-11-21"  # known_store.KST_NOV_21 in Seoul
OVERVIEW_CHARTS = 8
# Names written to be obeyed by a spreadsheet (OWASP's "CSV injection"), each one request
# at 11:0x in Seoul on Nov 21
HOSTILE = ('=HYPERLINK("https://evil.example/x","click")', "@SUM(A1)", "+1-2", "-cmd|' /C calc'!A0")

# What a person checks in each file: its exact header and how many rows it has
HEADERS = {
    "by_user": (
        "user,requests,failures,total_tokens,spend_usd,cache_hit_rate,requests_share,tokens_share,spend_share"
    ),
    "by_bucket": (
        # times in one zone, named: the bucket was local and its start UTC, unmarked
        "bucket (Asia/Seoul),bucket_start (Asia/Seoul),"
        "requests,successes,failures,success_rate,spend_usd,total_tokens,"
        "uncached_prompt_tokens,cached_tokens,answer_tokens,reasoning_tokens,cache_hit_rate,latency_p50_ms"
    ),
    "by_node": "node,requests,failures,total_tokens,spend_usd,requests_share,tokens_share",
    "user_client_matrix": "user,client,requests,total_tokens,spend_usd",
    "by_model": "model,requests,failures,total_tokens,spend_usd,cache_hit_rate,requests_share,tokens_share",
}
ROWS = {"by_user": 6, "by_bucket": 24, "by_node": 3, "user_client_matrix": 7, "by_model": 3}
LABELS = {
    "by_user": "download.users",
    "by_bucket": "download.series",
    "by_node": "download.nodes",
    "user_client_matrix": "download.clients",
    "by_model": "download.models",
}
# The Users file's first column: alice, bob and the four names, each behind a quote
USERS = {"alice", "bob", *("'" + name for name in HOSTILE)}


class LostDownload(AssertionError):
    """A click gave no file."""


def build(path: Path) -> Path:
    """known_store's rows and lists, and one request by each of the HOSTILE names."""
    hostile = [
        known_store.request(
            "vllm_streamed_reasoning_cached",
            name,
            dt.datetime(2026, 11, 21, 2, minute),
            request_id=f"hostile{minute}",
            user_agent="opencode/0.15.2",
            usage=(100, 0, 10, 0),
            spend=0.001,
            duration_ms=1000,
            ttft_ms=200,
        )
        for minute, name in enumerate(HOSTILE)
    ]
    ingest_rows(Config(store=path, nodes=known_store.NODES), [*known_store.ROWS, *hostile])
    write_snapshot(path / KEYS_FILE, known_store.keys_table())
    write_snapshot(path / USERS_FILE, known_store.users_table())
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("downloads") / "store")


@pytest.fixture(scope="module")
def expected(store: Path) -> dict[str, bytes]:
    """Each file as the dashboard makes it for the view, byte for byte."""
    data = overview(StoreReader(store), known_store.KST_NOV_21)
    return {key: panels.csv_bytes(data[key], known_store.SEOUL) for key in HEADERS}


@pytest.fixture(scope="module")
def app_url(store: Path) -> Iterator[str]:
    with store_server(store, PASSWORD) as url:
        yield url


def kind(message: Any, payload: str | bytes) -> str:
    """The type of one websocket frame's Streamlit message (a BackMsg or a ForwardMsg)."""
    if isinstance(payload, str):
        return "text"
    name: str | None = message.FromString(payload).WhichOneof("type")
    return name or "none"


@dataclass
class Overview:
    """The signed-in Overview in a browser, and the messages its websocket carried since
    `listen`: a script run is the browser's `rerun_script`, then the server's
    `new_session` ... `script_finished`; a deferred file is a `backend_operation_request`."""

    page: Any
    sent: list[str] = field(default_factory=list)
    received: list[str] = field(default_factory=list)

    def listen(self, socket: Any) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        socket.on("framesent", lambda payload: self.sent.append(kind(BackMsg, payload)))
        socket.on("framereceived", lambda payload: self.received.append(kind(ForwardMsg, payload)))

    def forget(self) -> None:
        self.sent.clear()
        self.received.clear()


@pytest.fixture
def view(app_url: str, request: pytest.FixtureRequest) -> Iterator[Overview]:
    """The Overview of the view, signed in, the downloads unfolded, no message heard yet;
    a screenshot in test-artifacts/ if the test fails."""
    with chromium(viewport={"width": 1440, "height": 2400}, accept_downloads=True) as page:
        overview_page = Overview(page)
        page.on("websocket", overview_page.listen)
        shot = ARTIFACTS / f"downloads-{request.node.name}.png"
        try:
            page.goto(app_url + VIEW)
            sign_in_as_administrator(page, PASSWORD, EN, charts=OVERVIEW_CHARTS)
            page.get_by_text(EN["download.header"], exact=True).click()
            button(page, "by_user").wait_for(timeout=30_000)
            wait_until_rendered(page, charts=OVERVIEW_CHARTS)
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(shot), full_page=True)
            raise
        overview_page.forget()
        yield overview_page
        if request.node.stash.get(FAILED, False):  # the test failed (tests/conftest.py)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(shot), full_page=True)


def button(page: Any, key: str) -> Any:
    return page.get_by_role("button", name=EN[LABELS[key]], exact=True)


def ready(page: Any, key: str) -> None:
    """The button takes a click again: its file request is answered."""
    from playwright.sync_api import expect

    expect(button(page, key)).to_be_enabled(timeout=30_000)


def body(download: Any, key: str) -> bytes:
    """The downloaded file, once whole."""
    assert download.failure() is None, download.failure()
    # named after the view and its range: the Nov 21 of VIEW
    assert download.suggested_filename == f"{key}_2026-11-21_2026-11-21.csv"
    return Path(download.path()).read_bytes()


def click_and_download(page: Any, key: str) -> bytes:
    with page.expect_download(timeout=30_000) as info:
        button(page, key).click()
    return body(info.value, key)


def check_file(data: bytes, key: str, expected: dict[str, bytes]) -> None:
    text = data.decode("utf-8")
    lines = text.split("\r\n")
    assert lines[0] == HEADERS[key], key
    assert lines[-1] == "", key  # the last row ends its line: nothing was cut off
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 1 + ROWS[key], (key, rows)
    assert data == expected[key], key


def check_no_rerun(view: Overview) -> None:
    """The clicks ran no script: the browser asked for none, the server started none."""
    assert "rerun_script" not in view.sent, view.sent
    started = [name for name in view.received if name in ("new_session", "script_finished")]
    assert not started, view.received
    page = view.page
    assert page.locator("[data-testid='stDownloadButtonError']").count() == 0
    assert page.locator("[data-testid='stException']").count() == 0
    assert page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").count() == 1


def test_two_clicks_in_a_row_give_two_whole_files(view: Overview, expected: dict[str, bytes]) -> None:
    first = click_and_download(view.page, "by_user")
    ready(view.page, "by_user")
    second = click_and_download(view.page, "by_user")
    ready(view.page, "by_user")
    for data in (first, second):
        check_file(data, "by_user", expected)
    check_no_rerun(view)


def test_every_button_gives_its_file_and_none_reruns_the_page(
    view: Overview, expected: dict[str, bytes]
) -> None:
    for key in HEADERS:
        check_file(click_and_download(view.page, key), key, expected)
        ready(view.page, key)
    check_no_rerun(view)
    # what a run looks like, heard the same way: a click that changes the view
    view.page.locator("[data-testid='stButtonGroup'] button", has_text=EN["users.by.tokens"]).first.click()
    deadline = time.monotonic() + 30
    while not ("rerun_script" in view.sent and "script_finished" in view.received):
        assert time.monotonic() < deadline, (view.sent, view.received)
        view.page.wait_for_timeout(100)


def test_a_name_read_as_a_formula_arrives_as_text(view: Overview) -> None:
    users = list(csv.DictReader(io.StringIO(click_and_download(view.page, "by_user").decode("utf-8"))))
    assert {row["user"] for row in users} == USERS
    assert not any(row["user"].startswith(("=", "+", "-", "@")) for row in users)
    hyperlink = next(row for row in users if "HYPERLINK" in row["user"])
    assert hyperlink["user"] == "'" + HOSTILE[0]  # the whole name, quotes and all
    assert hyperlink["requests"] == "1" and hyperlink["total_tokens"] == "110"
    assert hyperlink["spend_usd"] == "0.001"  # numbers stay numbers
    ready(view.page, "by_user")
    matrix = csv.DictReader(io.StringIO(click_and_download(view.page, "user_client_matrix").decode("utf-8")))
    assert {row["user"] for row in matrix} == USERS
    check_no_rerun(view)


def test_a_double_click_gives_two_whole_files(view: Overview, expected: dict[str, bytes]) -> None:
    """A button whose file is made on click (a callable) is disabled while it is made, and
    a double click's second click fell on it: one file (issue 16, point 8). The buttons
    hold their bytes (dashboard/panels/export.py, downloads), so every click is a plain link."""
    downloads: list[Any] = []

    def collect(download: Any) -> None:
        downloads.append(download)

    view.page.on("download", collect)
    with view.page.expect_download(timeout=30_000):
        button(view.page, "by_user").dblclick()
    ready(view.page, "by_user")
    deadline = time.monotonic() + 5  # a second file would have started by now
    while len(downloads) < 2 and time.monotonic() < deadline:
        view.page.wait_for_timeout(100)
    for download in downloads:
        check_file(body(download, "by_user"), "by_user", expected)
    check_no_rerun(view)
    if len(downloads) != 2:
        asked = view.sent.count("backend_operation_request")
        raise LostDownload(f"a double click gave {len(downloads)} file(s), not 2 (files asked for: {asked})")


def test_a_files_times_are_in_the_pages_zone_and_say_so() -> None:
    """A day's bucket (local) and its start (UTC) were written side by side, unmarked:
    2026-11-21 00:00 beside 2026-11-20 15:00+00:00 for the same instant."""
    import pandas as pd

    frame = pd.DataFrame(
        {
            "bucket": pd.to_datetime(["2026-11-21 00:00"]),
            "bucket_start": pd.to_datetime(["2026-11-20 15:00"]).tz_localize("UTC"),
            "requests": [3],
        }
    )
    lines = panels.csv_bytes(frame, "Asia/Seoul").decode().splitlines()
    assert lines == [
        "bucket (Asia/Seoul),bucket_start (Asia/Seoul),requests",
        "2026-11-21,2026-11-21,3",
    ]
