"""A green run leaves no server logs in test-artifacts/; a failed test keeps its own
(issue 16, point 9). Checked on an inner pytest run whose servers answer at once."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.browser import REPO

# a stand-in for Streamlit: answers the health check, nothing else to wait for
SERVER = """
import http.server, sys
class Ok(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
print("serving", flush=True)
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Ok).serve_forever()
"""

INNER = """
import sys
import pytest
from tests import browser

ARTIFACTS = {artifacts!r}


@pytest.fixture
def url(monkeypatch):
    monkeypatch.setattr(browser, "ARTIFACTS", __import__("pathlib").Path(ARTIFACTS))
    port = browser.free_port()
    with browser.serve([sys.executable, "-c", {server!r}, str(port)], {{}}, port) as url:
        yield url


def test_passes(url):
    pass


def test_fails_after_its_server_stopped(url):  # the fixture stops it cleanly
    raise AssertionError("a failure the log should explain")


def test_fails_inside_the_server(monkeypatch):
    monkeypatch.setattr(browser, "ARTIFACTS", __import__("pathlib").Path(ARTIFACTS))
    port = browser.free_port()
    with browser.serve([sys.executable, "-c", {server!r}, str(port)], {{}}, port):
        raise AssertionError("a failure inside the with block")
"""


def test_only_failed_tests_keep_their_server_logs(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    inner = tmp_path / "test_inner.py"
    inner.write_text(textwrap.dedent(INNER.format(artifacts=str(artifacts), server=SERVER)))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest", str(inner)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "1 passed" in run.stdout and "2 failed" in run.stdout, run.stdout + run.stderr
    logs = sorted(artifacts.glob("streamlit-*.log"))
    assert len(logs) == 2, [log.name for log in logs]  # the two failed tests' logs, not the passed one's
    assert all("serving" in log.read_text() for log in logs)
