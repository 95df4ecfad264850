"""The sign-in page, before any data: students paste their LiteLLM key, administrators
type their password (or a one-time code). Failed attempts slow a session down, then lock
it; process-wide bounds (auth.SignInGate) limit what anyone can have checked, without
letting a flood lock the right credential out."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import logging
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import streamlit as st

from dashboard import auth, one_time_code, preload, sessions
from dashboard.strings import t
from queries.runner import StoreReader
from settings.config import DashboardSettings
from state import db as state_db

log = logging.getLogger("dashboard.auth")


def gate() -> auth.SignInGate:
    """The bound on guessing, whatever the sessions, processes, forged addresses or
    timing: kept in the state database all the dashboard's processes share."""
    return _gate(state_db.state_url(os.environ))


@functools.cache
def _gate(url: str) -> auth.SignInGate:
    return auth.SignInGate(db=state_db.shared(url))


def render(
    reader: StoreReader,
    admins: Mapping[str, str],
    store: Path,
    settings: DashboardSettings,
    *,
    demo: bool = False,
) -> None:
    """The sign-in form; `demo`: the demo's, whose administrator enters by its own button."""
    _forms(reader, admins, store, settings, demo=demo)
    # last: the script's element takes a row's gap, below the forms it is not seen
    preload.chart_code()


def _forms(
    reader: StoreReader,
    admins: Mapping[str, str],
    store: Path,
    settings: DashboardSettings,
    *,
    demo: bool,
) -> None:
    st.title(t("signin.title"))
    st.caption(t("signin.subtitle"))
    # a refusal is said here, above the forms: below the button it was under the fold of
    # a 1280x800 screen on the demo's page
    notice = st.container()
    because = st.session_state.pop("signed_out_because", None)
    if because in ("key", "password"):
        st.warning(t(f"signin.{because}_revoked"))
    if st.session_state.pop("state_unavailable", False):
        st.error(t("signin.state_down"))
    session = st.session_state.setdefault("signin_throttle", auth.Throttle())
    wait = session.wait()
    if wait > 0:
        st.warning(t("signin.wait", seconds=math.ceil(wait)))
    door = _Door(session, reader, store, settings)
    student, admin = st.tabs([t("signin.student"), t("signin.admin")])
    with student, st.form("signin_student", clear_on_submit=True):
        pasted = st.text_input(
            t("signin.key"), type="password", placeholder="sk-...", help=t("signin.key.help")
        )
        if st.form_submit_button(t("signin.submit"), type="primary") and wait <= 0:
            key_hash = auth.key_hash(pasted)
            del pasted  # the key's text: hashed already, never kept
            with notice:
                _attempt(door, ("key", key_hash), lambda: _student(key_hash or "", reader))
    with admin:
        if not admins:  # nothing to type a password against: say how to set one, no form
            # a demo's visitor has no server to run a command on: its button is the way in
            st.info(t("signin.no_admin_demo" if demo else "signin.no_admin"))
            return
        with st.form("signin_admin", clear_on_submit=True):
            password = st.text_input(t("signin.password"), type="password", help=t("signin.password.help"))
            if st.form_submit_button(t("signin.submit"), type="primary") and wait <= 0:
                # the one-time code first: a file read and a sha256, before any budget, so
                # that no flood of passwords can keep it out
                if one_time_code.use(password, one_time_code.state_folder(os.environ)):
                    del password
                    by_code = auth.Identity(role="admin", name="admin")
                    with contextlib.suppress(state_db.StateUnavailable):  # the way in when all else fails
                        gate().known(_address())
                    _signed_in(door, by_code, "one-time code")
                    return
                check = functools.partial(_admin, password, admins)
                del password
                with notice:
                    _attempt(door, ("password", "admin"), check)


@dataclass(frozen=True)
class _Door:
    """Where a sign-in happens: the tab's own throttle, the store and its settings."""

    session: auth.Throttle
    reader: StoreReader
    store: Path
    settings: DashboardSettings


def _attempt(
    door: _Door,
    account: tuple[Literal["password", "key"], str | None],
    check: Callable[[], tuple[auth.Identity | None, str]],
) -> None:
    """One sign-in: admitted by the gate, then checked; a failure is counted."""
    kind, name = account
    if name is None:  # not even shaped like a key: nothing to look up
        _refused(door.session, "format")
        return
    try:
        ticket = gate().admit(kind, name, _address())
    except state_db.StateUnavailable as exc:
        # the budgets cannot be kept: nothing is checked, nobody let in unchecked
        log.error("sign-in refused: the state database failed (%s)", exc)
        st.error(t("signin.state_down"))
        return
    if not isinstance(ticket, auth.Ticket):
        log.warning("sign-in not checked: too many failed %s attempts (%.0f s to wait)", kind, ticket)
        st.warning(t("signin.wait", seconds=math.ceil(ticket)))
        return
    identity, problem = check()
    try:
        if identity is None:
            if gate().failed(ticket):
                log.warning("sign-in flood: the lab-wide budget of failed %ss is spent", kind)
            _refused(door.session, problem)
            return
        gate().succeeded(ticket)
    except state_db.StateUnavailable as exc:
        log.error("sign-in refused: the state database failed (%s)", exc)
        st.error(t("signin.state_down"))
        return
    _signed_in(door, identity, kind)


def _signed_in(door: _Door, identity: auth.Identity, by: str) -> None:
    door.session.succeeded()
    log.info("signed in: %s %s (%s)", identity.role, identity.name, by)
    signed_in(replace(identity, store=store_id(door.store), checked=door.reader.version()), door.settings)
    st.rerun()


def signed_in(identity: auth.Identity, settings: DashboardSettings) -> None:
    """The one way into a session (a form, a one-time code, the demo's button): this tab
    holds the identity, the state database the session behind the browser's cookie."""
    st.session_state["identity"] = identity
    sessions.begin(identity, identity.store or "", settings)


def _admin(password: str, admins: Mapping[str, str]) -> tuple[auth.Identity | None, str]:
    return auth.sign_in_admin(password, admins), "password"


def _student(key_hash: str, reader: StoreReader) -> tuple[auth.Identity | None, str]:
    check = student_check(key_hash, reader)
    return check.identity, check.problem


def student_check(key_hash: str, reader: StoreReader) -> auth.KeyCheck:
    """What the store says of this key now: a student's identity, or why not."""
    return auth.check_key(
        key_hash,
        lambda h: reader.run("key_lookup", key_hash=h).to_dict("records"),
        lambda user_id: reader.run("student_keys", user_id=user_id)["api_key_hash"].tolist(),
        dt.datetime.now(dt.UTC),
    )


def _refused(session: auth.Throttle, problem: str) -> None:
    session.failed()
    log.info("sign-in refused (%s)", problem)  # never the key or password itself
    # blocked, expired and unknown keys read alike: the answer must not confirm that a
    # guessed key exists
    st.error(t("signin.refused.password" if problem == "password" else f"signin.refused.{_shown(problem)}"))
    if session.wait() > 0:
        st.warning(t("signin.wait", seconds=math.ceil(session.wait())))


def _shown(problem: str) -> str:
    return "format" if problem == "format" else "unknown"


def store_id(store: Path) -> str:
    """What a sign-in is bound to: the store it was made on."""
    return str(store.resolve())


def _address() -> str | None:
    """The client's address as the server saw it: behind the documented reverse proxy, the
    one it wrote into X-Forwarded-For (uvicorn trusts that header only from the addresses in
    FORWARDED_ALLOW_IPS); None on loopback or when unknown (AppTest)."""
    address = st.context.ip_address
    return address if isinstance(address, str) and address else None
