"""The documented reverse proxy, run for real: nginx with deploy/nginx-usage.conf
overwrites a client's forged X-Forwarded-For, forbids framing, compresses the page's code
and carries the dashboard's WebSocket (a sign-in through it works)."""

from __future__ import annotations

import asyncio
import gzip
import http.server
import threading
import time
import urllib.request
from pathlib import Path

from bench.signin_guess import guess_once
from bench.st_session import BrowserSession
from dashboard import preload
from dashboard.auth import PASSWORD_PACE, hash_password
from dashboard.sessions import COOKIE
from dashboard.strings import EN
from state.db import STATE_ENV, STATE_URL_ENV
from tests import known_store
from tests.browser import chromium, known_store_server, nginx, sign_in_as_administrator, streamlit_server

REPO = Path(__file__).resolve().parent.parent
UPSTREAM = "127.0.0.1:8501"  # the first process the files name; a test's server has another port


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
        # the charts' code, which a first visit waits for, travels compressed and is kept
        chunk = f"static/js/{preload.chunk_files()[0]}"
        whole = (preload.STATIC_JS / preload.chunk_files()[0]).stat().st_size
        request = urllib.request.Request(f"{url}/{chunk}", headers={"Accept-Encoding": "gzip"})  # noqa: S310
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
            body = answer.read()
            assert answer.headers["Content-Encoding"] == "gzip"
            assert "immutable" in answer.headers["Cache-Control"]
        assert len(body) < whole / 2
        assert len(gzip.decompress(body)) == whole


def test_the_caddyfile_forbids_framing_and_keeps_caddys_own_address_handling() -> None:
    """Caddy is not installed here: its file is checked for what the nginx test proves."""
    caddyfile = (REPO / "deploy" / "Caddyfile").read_text(encoding="utf-8")
    assert 'X-Frame-Options "DENY"' in caddyfile
    assert "Content-Security-Policy \"frame-ancestors 'none'\"" in caddyfile
    assert "trusted_proxies" not in caddyfile  # trusting none: a client's X-Forwarded-For is replaced
    assert f"reverse_proxy {UPSTREAM}" in caddyfile


def test_two_processes_behind_nginx_share_sign_ins_and_the_guessing_budget(tmp_path: Path) -> None:
    """deploy/'s nginx files in front of two processes sharing one state folder: a
    browser signed in through one is still signed in when moved to the other (a reload
    with the stickiness broken), and wrong passwords sent to both at once get the one
    lab-wide pace of checks, not one per process."""
    store = known_store.build(tmp_path / "store")
    env = {
        "USAGE_STORE": str(store),
        "USAGE_TIMEZONE": "Asia/Seoul",
        "USAGE_ADMIN_PASSWORD_HASH": hash_password(PASSWORD),
        STATE_ENV: str(tmp_path / "state"),
        STATE_URL_ENV: "",
    }
    with (
        streamlit_server(env) as one,
        streamlit_server(env) as two,
        nginx(tmp_path / "nginx", *(u.removeprefix("http://") for u in (one, two))) as url,
    ):
        with chromium() as page:
            first = page.goto(url).headers["x-upstream"]
            sign_in_as_administrator(page, PASSWORD, EN)
            assert any(c["name"] == COOKIE for c in page.context.cookies())
            other = next(u.removeprefix("http://") for u in (one, two) if u.removeprefix("http://") != first)
            for route in range(200):  # a route cookie nginx sends to the other process
                page.context.add_cookies([{"name": "usage_route", "value": f"moved-{route}", "url": url}])
                if page.request.get(f"{url}/_stcore/health").headers["x-upstream"] == other:
                    break
            moved = page.reload()
            assert moved is not None and moved.headers["x-upstream"] == other
            page.wait_for_selector(f"button:has-text('{EN['signout.button']}')", timeout=60_000)

        async def flood() -> list[str]:
            guesses = [
                guess_once((one, two)[i % 2], f"203.0.113.{i}", f"wrong-{i}") for i in range(FLOOD_GUESSES)
            ]
            return await asyncio.gather(*guesses)

        began = time.monotonic()
        outcomes = asyncio.run(flood())
        seconds = time.monotonic() - began
    burst, every_s = PASSWORD_PACE
    checked = outcomes.count("checked")
    assert outcomes.count("held_back") == FLOOD_GUESSES - checked
    # one pace for both: its burst, and one more per `every_s` the flood lasted (two
    # processes with a pace each would have checked 2 x burst at once)
    assert burst <= checked <= burst + seconds / every_s + 1, (checked, seconds)


FLOOD_GUESSES = 24
PASSWORD = "correct horse battery staple"
