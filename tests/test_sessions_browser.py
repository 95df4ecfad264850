"""Sign-ins that last, in a real browser against the real server: a reload and a new tab
stay signed in, a sign-out ends every tab, a link's page and parameters survive the
sign-in, the cookie's flags, a token in no URL, page or log line, a revoked key's cookie
and a cookie of another store open nothing, and a forged cookie is simply signed out."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow.compute as pc

from contract.store import KEYS_FILE
from dashboard.auth import hash_password
from dashboard.sessions import COOKIE, HEADER, ROUTE
from dashboard.strings import EN
from etl.load import write_snapshot
from state.db import STATE_ENV, STATE_URL_ENV, StateDB, state_url
from tests import known_store
from tests.browser import ARTIFACTS, chromium, streamlit_server, wait_until_rendered

PASSWORD = "correct horse battery staple"
SIGNED_IN = f"button:has-text('{EN['signout.button']}')"
FORMS = "[data-testid='stForm']"


@contextmanager
def server(store: Path, state: Path) -> Iterator[str]:
    env = {
        "USAGE_STORE": str(store),
        "USAGE_TIMEZONE": "Asia/Seoul",
        "USAGE_ADMIN_PASSWORD_HASH": hash_password(PASSWORD),
        STATE_ENV: str(state),
        STATE_URL_ENV: "",
    }
    with streamlit_server(env) as url:
        yield url


def signed_in(page: Any, timeout_s: float = 60) -> bool:
    """Whether the page settles signed in (its sign-out button) or at the sign-in forms."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if page.locator(SIGNED_IN).count():
            return True
        if page.locator(FORMS).count() >= 2:
            wait_until_rendered(page)
            return bool(page.locator(SIGNED_IN).count())
        time.sleep(0.2)
    raise AssertionError(f"neither signed in nor at the sign-in page: {page.url}")


def submit(page: Any, *, password: str | None = None, key: str | None = None) -> None:
    wait_until_rendered(page)
    if password is not None:
        page.get_by_role("tab", name=EN["signin.admin"]).click()
        page.get_by_role("textbox", name=EN["signin.password"]).fill(password)
        page.locator(FORMS).nth(1).get_by_role("button", name=EN["signin.submit"]).click()
    else:
        page.get_by_role("textbox", name=EN["signin.key"]).fill(key or "")
        page.locator(FORMS).nth(0).get_by_role("button", name=EN["signin.submit"]).click()
    page.wait_for_selector(SIGNED_IN, timeout=60_000)


def session_cookie(page: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = [c for c in page.context.cookies() if c["name"] == COOKIE]
        if found:
            return dict(found[0])
        time.sleep(0.2)
    raise AssertionError("no session cookie was set")


def log_of(url: str) -> str:
    return (ARTIFACTS / f"streamlit-{url.rsplit(':', 1)[1]}.log").read_text(encoding="utf-8")


def test_an_administrator_stays_signed_in_across_reloads_and_tabs_until_signing_out(tmp_path: Path) -> None:
    store = known_store.build(tmp_path / "store")
    visited: list[str] = []
    with server(store, tmp_path / "state") as url, chromium() as page:
        page.set_viewport_size({"width": 1280, "height": 800})
        page.on("request", lambda request: visited.append(request.url))
        page.goto(f"{url}/nodes?range=30d")  # a colleague's link, before signing in
        submit(page, password=PASSWORD)
        wait_until_rendered(page)
        assert page.url == f"{url}/nodes?range=30d"  # the page and parameters it named
        assert page.get_by_role("heading", name=EN["page.nodes"]).count()
        cookie = session_cookie(page)
        assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
        assert not cookie["secure"]  # plain http on loopback here; behind HTTPS it is Secure
        token = cookie["value"]
        assert len(token) >= 40
        page.reload()
        assert signed_in(page) and page.url == f"{url}/nodes?range=30d"
        other = page.context.new_page()
        other.on("request", lambda request: visited.append(request.url))
        other.goto(f"{url}/budgets")
        assert signed_in(other)
        wait_until_rendered(other)
        assert other.get_by_role("heading", name=EN["page.budgets"]).count()
        assert not any(token in text for text in (*visited, page.content(), other.content()))
        # sign out in the new tab: the first tab's next step finds itself signed out
        other.get_by_role("button", name=EN["signout.button"]).click()
        other.wait_for_selector(FORMS, timeout=30_000)
        deadline = time.monotonic() + 20
        while any(c["name"] == COOKIE for c in page.context.cookies()) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(c["name"] == COOKIE for c in page.context.cookies())  # dropped
        page.get_by_role("link", name=EN["page.overview"]).click()
        page.wait_for_selector(FORMS, timeout=30_000)
        assert not signed_in(page)
        # the old cookie, put back by hand, opens nothing: the session is over
        page.context.add_cookies([{"name": COOKIE, "value": token, "url": url}])
        page.reload()
        assert not signed_in(page)
        # a forged cookie: just the sign-in page, no error, no hint
        page.context.add_cookies([{"name": COOKIE, "value": "A" * 43, "url": url}])
        page.reload()
        assert not signed_in(page)
        assert not page.locator("[data-testid='stException'], [data-testid='stAlert']").count()
        log = log_of(url)
    assert token not in log


def test_a_students_cookie_lasts_until_the_key_is_blocked(tmp_path: Path) -> None:
    store = known_store.build(tmp_path / "store")
    with server(store, tmp_path / "state") as url, chromium() as page:
        page.goto(url)
        submit(page, key="sk-alice")
        session_cookie(page)
        page.reload()
        assert signed_in(page)
        other = page.context.new_page()
        other.goto(url)
        assert signed_in(other)
        # the next ETL run copies LiteLLM's keys: alice's is blocked now
        keys = known_store.keys_table()
        blocked = pc.equal(keys["api_key_hash"], known_store.key_of("alice"))
        column = pc.or_(keys["blocked"], blocked)
        write_snapshot(
            store / KEYS_FILE, keys.set_column(keys.schema.get_field_index("blocked"), "blocked", column)
        )
        # the server notices the store's new version (it looks every few seconds): from
        # then on the cookie opens nothing, in a new tab as in the open one
        deadline, out = time.monotonic() + 60, False
        while not out and time.monotonic() < deadline:
            third = page.context.new_page()
            third.goto(url)
            out = not signed_in(third)
            third.close()
        assert out
        page.reload()
        assert not signed_in(page)


def test_a_cookie_made_on_one_store_opens_nothing_on_another(tmp_path: Path) -> None:
    """The demo's administrator (one click, no password) must never become an
    administrator of the real store: a session is bound to the store it was made on."""
    state = tmp_path / "state"
    with server(known_store.build(tmp_path / "one"), state) as url, chromium() as page:
        page.goto(url)
        submit(page, password=PASSWORD)
        cookie = session_cookie(page)
    with server(known_store.build(tmp_path / "two"), state) as url, chromium() as page:
        page.context.add_cookies([{"name": COOKIE, "value": cookie["value"], "url": url}])
        page.goto(url)
        assert not signed_in(page)


def post(url: str, body: object, headers: dict[str, str]) -> tuple[int, str | None]:
    """POST to the session route: the status and the Set-Cookie header."""
    request = urllib.request.Request(  # noqa: S310
        f"{url}/{ROUTE}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
            return answer.status, answer.headers.get("Set-Cookie")
    except urllib.error.HTTPError as refused:
        return refused.code, refused.headers.get("Set-Cookie")


def test_the_session_route_refuses_anything_but_a_fresh_ticket(tmp_path: Path) -> None:
    """A ticket is good once, for a cookie with all its flags (Secure when the proxy says
    the page was served over HTTPS); anything else is a bare 403 without a cookie."""
    state = tmp_path / "state"
    with server(known_store.build(tmp_path / "store"), state) as url:
        db = StateDB(state_url({STATE_ENV: str(state)}))
        _, ticket = db.open_session(
            role="admin",
            name="admin",
            user_id=None,
            credential=None,
            store="x",
            lifetime_s=60.0,
            now=time.time(),
        )
        status, cookie = post(url, {"ticket": ticket}, {HEADER: "1", "X-Forwarded-Proto": "https"})
        assert status == 204 and cookie is not None
        flags = {part.strip().split("=")[0].lower() for part in cookie.split(";")[1:]}
        assert {"httponly", "secure", "samesite", "path", "max-age"} <= flags
        assert "samesite=strict" in cookie.lower() and "path=/" in cookie.lower()
        assert post(url, {"ticket": ticket}, {HEADER: "1"}) == (403, None)  # once
        answers = [
            post(url, body, headers)
            for headers, body in [
                ({}, {"ticket": "x"}),  # no custom header: a cross-site form
                ({HEADER: "1"}, {"ticket": "made-up"}),
                ({HEADER: "1"}, ["not", "an", "object"]),
                ({HEADER: "1"}, {"ticket": "x" * 5000}),
            ]
        ]
    assert answers == [(403, None)] * 4
