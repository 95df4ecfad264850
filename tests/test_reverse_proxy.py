"""The documented reverse proxy, run for real: nginx with deploy/nginx-usage.conf
overwrites a client's forged X-Forwarded-For, forbids framing, and carries the dashboard's
WebSocket (a sign-in through it works)."""

from __future__ import annotations

import asyncio
import http.server
import shutil
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.st_session import BrowserSession
from dashboard.strings import EN
from tests.browser import free_port, known_store_server

REPO = Path(__file__).resolve().parent.parent
SNIPPET = REPO / "deploy" / "nginx-usage.conf"
UPSTREAM = "127.0.0.1:8501"  # what the snippet proxies to; a test's server has another port


@contextmanager
def nginx(tmp_path: Path, upstream: str) -> Iterator[str]:
    """nginx serving the README's snippet (its upstream moved to `upstream`) on a free
    loopback port; yields its URL."""
    binary = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if binary is None:
        pytest.fail("nginx is missing: .ci/run installs Debian's nginx-light")
    snippet = SNIPPET.read_text(encoding="utf-8")
    tmp_path.mkdir(parents=True, exist_ok=True)
    assert UPSTREAM in snippet
    (tmp_path / "usage.conf").write_text(snippet.replace(UPSTREAM, upstream), encoding="utf-8")
    port = free_port()
    temp = {name: tmp_path / name for name in ("body", "proxy", "fastcgi", "uwsgi", "scgi")}
    for path in temp.values():
        path.mkdir()
    (tmp_path / "nginx.conf").write_text(
        f"""daemon off;
pid {tmp_path}/nginx.pid;
error_log {tmp_path}/error.log;
events {{}}
http {{
    access_log off;
    client_body_temp_path {temp["body"]};
    proxy_temp_path {temp["proxy"]};
    fastcgi_temp_path {temp["fastcgi"]};
    uwsgi_temp_path {temp["uwsgi"]};
    scgi_temp_path {temp["scgi"]};
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


class _Echo(http.server.BaseHTTPRequestHandler):
    """Answers with the X-Forwarded-For header it was sent."""

    def do_GET(self) -> None:
        body = (self.headers.get("X-Forwarded-For") or "").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_the_proxy_overwrites_a_forged_address_and_forbids_framing(tmp_path: Path) -> None:
    echo = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=echo.serve_forever, daemon=True).start()
    try:
        with nginx(tmp_path, f"127.0.0.1:{echo.server_address[1]}") as url:
            request = urllib.request.Request(url, headers={"X-Forwarded-For": "203.0.113.66"})  # noqa: S310
            with urllib.request.urlopen(request, timeout=5) as answer:  # noqa: S310
                seen = answer.read().decode()
                headers = answer.headers
    finally:
        echo.shutdown()
    assert seen == "127.0.0.1"  # the address nginx saw, not the one the client claimed
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Content-Security-Policy"] == "frame-ancestors 'none'"


def test_a_student_signs_in_through_the_proxy(tmp_path: Path) -> None:
    async def sign_in(url: str) -> bool:
        browser = BrowserSession(url)
        try:
            await browser.open()
            await browser.submit({EN["signin.key"]: "sk-alice"}, EN["signin.submit"])
            return browser.page.has("button", label=EN["signout.button"])
        finally:
            await browser.close()

    with (
        known_store_server(tmp_path, "not used here, but configured") as app_url,
        nginx(tmp_path / "nginx", app_url.removeprefix("http://")) as url,
    ):
        assert asyncio.run(sign_in(url))


def test_the_caddyfile_forbids_framing_and_keeps_caddys_own_address_handling() -> None:
    """Caddy is not installed here: its file is checked for what the nginx test proves."""
    caddyfile = (REPO / "deploy" / "Caddyfile").read_text(encoding="utf-8")
    assert 'X-Frame-Options "DENY"' in caddyfile
    assert "Content-Security-Policy \"frame-ancestors 'none'\"" in caddyfile
    assert "trusted_proxies" not in caddyfile  # trusting none: a client's X-Forwarded-For is replaced
    assert f"reverse_proxy {UPSTREAM}" in caddyfile
