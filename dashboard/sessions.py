"""Sign-ins that outlast a reload and reach other tabs: the page side.

At sign-in the script opens a session in the state database (state/db.py) and hands the
browser a one-time ticket (60 s, single use, kept as its sha256), which the page's own
script posts at once to `/api/session` (dashboard/session_routes.py). That route answers
with the session's cookie: an opaque random token, HttpOnly (no script can read it),
SameSite=Strict, Secure over HTTPS, of which the server keeps only the sha256. A reload
or a new tab then finds the cookie (`st.context.cookies`) and the session behind it.

Every rerun asks the database whether the tab's session still stands, so a sign-out in
one tab ends every tab and cookie; the rules that end a session otherwise (a key blocked
or deleted in LiteLLM, a changed administrator password, the demo replaced by the real
store) are checked again on a session restored from its cookie. A database that cannot
be read signs nobody in: the sign-in page says so.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Final

import streamlit as st

from dashboard import auth
from queries.runner import StoreReader
from settings.config import DashboardSettings
from state import db as state_db

log = logging.getLogger("dashboard.auth")

COOKIE: Final = "usage_session"
ROUTE: Final = "api/session"  # below the app's base path; POST only
HEADER: Final = "X-Usage-Session"  # a custom header: a cross-site form cannot send it


def route_path(base_url_path: str) -> str:
    """The session route's path under the app's base path (server.baseUrlPath)."""
    base = base_url_path.strip("/")
    return "/" + "/".join(part for part in (base, ROUTE) if part)


def database() -> state_db.StateDB:
    """The processes' shared state database (raises state_db.StateUnavailable)."""
    return state_db.shared(state_db.state_url(os.environ))


def lifetime_s(role: str, settings: DashboardSettings) -> float:
    """How long a session lasts without being used (each use moves its end forward)."""
    if role == "admin":
        return settings.admin_session_hours * 3600.0
    return settings.student_session_days * 86400.0


def begin(identity: auth.Identity, store: str, settings: DashboardSettings) -> None:
    """A new sign-in: the session in the database, and the ticket for the browser to turn
    into the cookie on this run's page (`hand_over`)."""
    try:
        sid, ticket = database().open_session(
            role=identity.role,
            name=identity.name,
            user_id=identity.user_id,
            credential=identity.key,
            store=store,
            lifetime_s=lifetime_s(identity.role, settings),
            now=time.time(),
        )
    except state_db.StateUnavailable as exc:
        # the tab stays signed in without a cookie: a reload will ask again
        log.error("sign-in kept for this tab only: the state database failed (%s)", exc)
        return
    st.session_state["session_sid"] = sid
    st.session_state["session_ticket"] = ticket


def hand_over() -> None:
    """Posts a fresh sign-in's ticket for the cookie (once: the ticket is dropped here).
    The ticket is inside this page's own script only, never in a URL or a log."""
    ticket = st.session_state.pop("session_ticket", None)
    if ticket:
        with st.sidebar:  # an empty element: in the sidebar, it moves nothing on the page
            _post({"ticket": ticket})


def restore(
    reader: StoreReader,
    store: str,
    admins: Mapping[str, str],
    student: Callable[[str], auth.Identity | None],
) -> auth.Identity | None:
    """The identity of the session the browser's cookie names, checked again as at sign-in
    (a student's key in the store now by `student(key hash)`, an administrator's password hash unchanged, the
    same store); None when there is none, or it no longer stands (then it is ended)."""
    token = st.context.cookies.get(COOKIE)
    if not isinstance(token, str) or not token:
        return None
    try:
        found = database().by_token(token, time.time())
    except state_db.StateUnavailable as exc:
        log.error("a session cookie could not be checked: the state database failed (%s)", exc)
        st.session_state["state_unavailable"] = True
        return None
    if found is None:
        return None
    identity = _identity(found, student)
    if identity is None or found.store != store or not auth.still_admin(identity, admins):
        _end(found.sid)
        return None
    st.session_state["session_sid"] = found.sid
    return replace(identity, store=store, checked=reader.version())


def still_open() -> bool:
    """Whether this tab's session was not ended (a sign-out in another tab, an expiry).
    A tab signed in while the database failed has no session there, and nothing to ask."""
    sid = st.session_state.get("session_sid")
    if sid is None:
        return True
    try:
        return database().by_sid(str(sid), time.time()) is not None
    except state_db.StateUnavailable as exc:
        log.error("a session could not be checked: the state database failed (%s)", exc)
        st.session_state["state_unavailable"] = True
        return False  # never let anyone in unchecked


def end() -> None:
    """Sign-out: the session ends in the database (every tab, every cookie) and the
    browser is asked to drop the cookie on the next page drawn."""
    sid = st.session_state.get("session_sid")
    if sid is not None:
        _end(str(sid))
        st.session_state["session_drop_cookie"] = True


def drop_cookie() -> None:
    """On the sign-in page after a sign-out: the browser forgets the cookie."""
    if st.session_state.pop("session_drop_cookie", False):
        _post({"end": True})


def _identity(
    found: state_db.Session, student: Callable[[str], auth.Identity | None]
) -> auth.Identity | None:
    if found.role == "admin":
        return auth.Identity(role="admin", name=found.name, key=found.credential)
    return student(found.credential) if found.credential else None


def _end(sid: str) -> None:
    try:
        database().end(sid)
    except state_db.StateUnavailable as exc:
        log.error("a session could not be ended: the state database failed (%s)", exc)


def _post(body: dict[str, object]) -> None:
    path = route_path(str(st.get_option("server.baseUrlPath") or ""))
    options = {
        "method": "POST",
        "credentials": "same-origin",
        "cache": "no-store",
        "headers": {"Content-Type": "application/json", HEADER: "1"},
        "body": json.dumps(body),
    }
    # JSON, with "</" escaped: data, never markup, and it cannot close the script element
    args = f"{json.dumps(path)},{json.dumps(options)}".replace("</", "<\\/")
    script = f"<script>fetch({args});</script>"
    st.html(script, unsafe_allow_javascript=True, width="content")
