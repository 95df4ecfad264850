"""The weekly digest (issue 32, part 4) against a real SMTP server on loopback (aiosmtpd)
and a local HTTP endpoint standing for a Slack or Mattermost webhook: the message says
what the administrators' page says, a failed send is kept and sent by the next run, and no
secret reaches a log, a message or the dashboard's state."""

from __future__ import annotations

import dataclasses
import datetime as dt
import http.server
import json
import logging
import threading
from collections.abc import Iterator
from email import message_from_bytes, policy
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller

from dashboard import digest
from settings.config import load_config
from settings.digest import DigestSettings
from settings.errors import ConfigError
from state import db as state_db
from tests import verdict_lab
from tests.browser import free_port
from tests.test_glance import WEEK
from tests.test_pages import open_page

LAST_DAY = dt.date(2026, 12, 7)  # the lab's week: 1 to 7 December
NOW = dt.datetime(2026, 12, 8, 1, 0, tzinfo=dt.UTC)
WEBHOOK_SECRET = "T000/B000/hunter2-webhook-secret"


class Mailbox:
    """aiosmtpd's handler: every message it was given."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append((envelope.rcpt_tos, message_from_bytes(envelope.content, policy=policy.default)))
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[tuple[Mailbox, int]]:
    box, port = Mailbox(), free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield box, port
    finally:
        controller.stop()


class Hook:
    """A webhook on loopback: answers `status` and keeps every body it was posted."""

    def __init__(self) -> None:
        self.status = 200
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []


@pytest.fixture
def hook() -> Iterator[tuple[Hook, str]]:
    state = Hook()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            state.bodies.append(json.loads(self.rfile.read(length)))
            state.paths.append(self.path)
            self.send_response(state.status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_port}/hooks/{WEBHOOK_SECRET}"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return verdict_lab.build(tmp_path_factory.mktemp("digest") / "store")


def config_for(lab: Path, port: int) -> Any:
    config = load_config(None, store=lab, env={"USAGE_TIMEZONE": "UTC"})
    settings = DigestSettings(
        to=("professor@lab.example",),
        sender="usage@lab.example",
        smtp_host="127.0.0.1",
        smtp_port=port,
        starttls=False,
        dashboard_url="https://usage.lab.example",
    )
    return dataclasses.replace(config, digest=settings)


def test_the_email_says_what_the_page_says(
    lab: Path, smtp: tuple[Mailbox, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    box, port = smtp
    env = {state_db.STATE_ENV: str(tmp_path / "state")}
    assert digest.run(config_for(lab, port), env, NOW, LAST_DAY) == 0

    [(to, mail)] = box.messages
    assert to == ["professor@lab.example"]
    assert mail["Subject"] == "LLM usage, week of 2026-12-01 to 2026-12-07"
    text = mail.get_content()
    page = open_page(lab, monkeypatch, "Overview", **WEEK)
    shown = [m.value for m in page.markdown if m.value.startswith("- ")]
    lines = [digest._text(line.removeprefix("- ")) for block in shown for line in block.split("\n")]
    assert lines and all(f"- {line}" in text for line in lines), (lines, text)
    assert "user3" in text and "https://usage.lab.example" in text
    # a second run the same week sends nothing again
    assert digest.run(config_for(lab, port), env, NOW, LAST_DAY) == 0
    assert len(box.messages) == 1


def test_a_failed_send_is_kept_and_sent_by_the_next_run_without_a_secret_anywhere(
    lab: Path,
    smtp: tuple[Mailbox, int],
    hook: tuple[Hook, str],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    box, port = smtp
    state, url = hook
    env = {
        state_db.STATE_ENV: str(tmp_path / "state"),
        "USAGE_DIGEST_WEBHOOK": url,
        "USAGE_SMTP_PASSWORD": "hunter2-smtp",
    }
    config = config_for(lab, port)
    state.status = 500
    caplog.set_level(logging.INFO)
    assert digest.run(config, env, NOW, LAST_DAY) == 75  # the webhook failed; the e-mail went
    assert len(box.messages) == 1 and len(state.bodies) == 1
    db = state_db.shared(state_db.state_url(env))
    rows = {row["channel"]: row for row in db.digests()}
    assert rows["email"]["sent"] is not None
    assert rows["webhook"]["sent"] is None and rows["webhook"]["attempts"] == 1
    assert rows["webhook"]["last_error"] == "the webhook answered HTTP 500"
    assert "the next run tries again" in caplog.text

    state.status = 200
    assert digest.run(config, env, NOW + dt.timedelta(hours=1), LAST_DAY) == 0
    assert len(state.bodies) == 2 and len(box.messages) == 1  # the webhook again, not the e-mail
    assert state.bodies[1] == state.bodies[0] and "user3" in state.bodies[1]["text"]
    assert all(row["sent"] is not None for row in db.digests())

    stored = json.dumps(db.digests(), default=str)
    assert "hunter2" not in state_db_text(tmp_path / "state")
    for secret in (WEBHOOK_SECRET, "hunter2-smtp"):
        assert secret not in caplog.text and secret not in stored
        assert secret not in box.messages[0][1].get_content()


def test_an_unreachable_smtp_server_is_named_and_retried(lab: Path, tmp_path: Path) -> None:
    env = {state_db.STATE_ENV: str(tmp_path / "state")}
    config = config_for(lab, free_port())  # nothing listens there
    assert digest.run(config, env, NOW, LAST_DAY) == 75
    [row] = state_db.shared(state_db.state_url(env)).digests()
    assert row["last_error"] == "the SMTP server could not be reached (ConnectionRefusedError)"
    assert digest.run(config, env, NOW, LAST_DAY) == 75
    [row] = state_db.shared(state_db.state_url(env)).digests()
    assert row["attempts"] == 2 and row["sent"] is None


def test_names_from_the_data_cannot_ping_a_channel() -> None:
    assert digest._slack("**<!channel>** & co") == "**&lt;!channel&gt;** &amp; co"
    assert digest._text(r"**a\_b** spent \$3") == "a_b spent $3"


def test_nothing_configured_is_refused_with_what_to_set(lab: Path, tmp_path: Path) -> None:
    config = load_config(None, store=lab, env={})
    with pytest.raises(ConfigError, match="USAGE_DIGEST_WEBHOOK"):
        digest.run(config, {state_db.STATE_ENV: str(tmp_path)}, NOW)
    bad = tmp_path / "usage.toml"
    bad.write_text('[digest]\nto = ["not an address"]\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"digest\.to must be e-mail addresses"):
        load_config(bad, env={})


def state_db_text(folder: Path) -> str:
    """Every byte the dashboard's state holds, as text (SQLite and its journal)."""
    return "".join(p.read_bytes().decode("latin-1") for p in folder.iterdir() if p.is_file())


def test_the_status_page_names_a_digest_waiting_to_be_sent(
    lab: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {state_db.STATE_ENV: str(tmp_path / "state")}
    assert digest.run(config_for(lab, free_port()), env, NOW, LAST_DAY) == 75
    monkeypatch.setenv(state_db.STATE_ENV, str(tmp_path / "state"))
    monkeypatch.delenv(state_db.STATE_URL_ENV)  # the tests' default: a state of one's own
    at = open_page(lab, monkeypatch, "ETL status")
    [warning] = [w.value for w in at.warning if "not sent yet" in w.value]
    assert "the SMTP server could not be reached (ConnectionRefusedError)" in warning
    assert "2026-12-07" in at.dataframe[-1].value["week"].tolist()
