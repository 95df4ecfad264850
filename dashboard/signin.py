"""The sign-in page, before any data: students paste their LiteLLM key, administrators
type their password. Failed attempts slow down, then lock, per session and per address."""

from __future__ import annotations

import datetime as dt
import logging
import math
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import streamlit as st

from dashboard import auth
from dashboard.strings import t
from queries.runner import StoreReader

log = logging.getLogger("dashboard.auth")

# Per client address, failures only slow down and never lock: behind a reverse proxy every
# visitor has the proxy's address, and a stranger's guesses must not shut the whole lab out.
# A new browser session escapes the per-session lock, so this is what bounds guessing:
# at most one attempt per 30 s per address once it has failed 10 times.
_ADDRESSES: dict[str, auth.Throttle] = {}
_ADDRESSES_LOCK = threading.Lock()


def render(reader: StoreReader, admins: Mapping[str, str], store: Path) -> None:
    st.title(t("signin.title"))
    st.caption(t("signin.subtitle"))
    session = st.session_state.setdefault("signin_throttle", auth.Throttle())
    address = _address_throttle()
    wait = max(session.wait(), address.wait())
    if wait > 0:
        st.warning(t("signin.wait", seconds=math.ceil(wait)))
    student, admin = st.tabs([t("signin.student"), t("signin.admin")])
    with student, st.form("signin_student", clear_on_submit=True):
        pasted = st.text_input(
            t("signin.key"), type="password", placeholder="sk-...", help=t("signin.key.help")
        )
        if st.form_submit_button(t("signin.submit"), type="primary") and wait <= 0:
            identity, problem = _student(pasted, reader)
            del pasted  # the key's text: hashed already, never kept
            _finish(identity, problem, session, address, store)
    with admin:
        if not admins:
            st.info(t("signin.no_admin"))
        with st.form("signin_admin", clear_on_submit=True):
            password = st.text_input(t("signin.password"), type="password")
            if st.form_submit_button(t("signin.submit"), type="primary") and wait <= 0:
                identity = auth.sign_in_admin(password, admins)
                del password
                _finish(identity, "password", session, address, store)


def _student(pasted: str, reader: StoreReader) -> tuple[auth.Identity | None, str]:
    key_hash = auth.key_hash(pasted)
    if key_hash is None:
        return None, "format"
    check = auth.check_key(
        key_hash,
        lambda h: reader.run("key_lookup", key_hash=h).to_dict("records"),
        lambda user_id: reader.run("student_keys", user_id=user_id)["api_key_hash"].tolist(),
        dt.datetime.now(dt.UTC),
    )
    return check.identity, check.problem


def _finish(
    identity: auth.Identity | None,
    problem: str,
    session: auth.Throttle,
    address: auth.Throttle,
    store: Path,
) -> None:
    if identity is None:
        session.failed()
        address.failed()
        log.info("sign-in refused (%s)", problem)  # never the key or password itself
        st.error(t(f"signin.refused.{problem}"))
        wait = max(session.wait(), address.wait())
        if wait > 0:
            st.warning(t("signin.wait", seconds=math.ceil(wait)))
        return
    session.succeeded()
    log.info("signed in: %s %s", identity.role, identity.name)
    st.session_state["identity"] = replace(identity, store=store_id(store))
    st.rerun()


def store_id(store: Path) -> str:
    """What a sign-in is bound to: the store it was made on."""
    return str(store.resolve())


def _address_throttle() -> auth.Throttle:
    address = st.context.ip_address
    if not isinstance(address, str) or not address:  # no client address known (AppTest: a mock)
        address = "unknown"
    with _ADDRESSES_LOCK:
        if len(_ADDRESSES) > 10_000:  # bounded: forget the oldest addresses
            for stale in list(_ADDRESSES)[:5_000]:
                del _ADDRESSES[stale]
        return _ADDRESSES.setdefault(address, auth.Throttle(free=10, lock_after=None, max_delay_s=30))
