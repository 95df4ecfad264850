"""The Streamlit app: page set-up, sign-in, then the pages the signed-in person may see."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import streamlit as st

from dashboard import (
    auth,
    budgets,
    demo_mode,
    etl_status,
    language,
    my_usage,
    nodes,
    overview,
    panels,
    sessions,
    signin,
    statements,
)
from dashboard.panels import plot
from dashboard.strings import t
from dashboard.view_state import ViewState
from queries.runner import StoreReader, reader
from queries.scope import ScopedReader
from settings.config import load_config


def main() -> None:
    config = load_config()
    # The session's language before any text: on its first run from the link's lang=, else
    # the configuration; then the sidebar's switch (signed in or not) changes it.
    language.choose(config.dashboard.language)
    st.set_page_config(page_title=t("title"), page_icon=":material/monitoring:", layout="wide")
    plot.style()  # the charts' colours on a dark page
    # the widgets whose choices are labelled in the language: a switch relabels them
    labelled = (panels.WIDGETS["range"], panels.WIDGETS["by"])
    language.switch(config.dashboard.language, labelled=labelled)
    store = demo_mode.store_to_show(config)
    base = reader(store, config.dashboard.timezone, demo_mode.prices(config, store))
    demo = demo_mode.banner(store)
    store_id = signin.store_id(store)
    admins = auth.administrators(_auth_secrets(), os.environ)
    identity: auth.Identity | None = st.session_state.get("identity")
    if identity is not None and not sessions.still_open():
        # signed out in another tab, or expired: every tab of the session ends with it
        _clear()
        identity = None
    if identity is None:
        # a reload or a new tab: the browser's cookie names the session, checked again
        identity = sessions.restore(base, store_id, admins, functools.partial(_student, base))
        if identity is not None:
            st.session_state["identity"] = identity
    if identity is not None and identity.store is not None and identity.store != store_id:
        # signed in on another store: the demo's one-click administrator must never become
        # an administrator of the real data once the ETL has filled the real store
        _sign_out()
        identity = None
    if identity is not None and identity.role == "student":
        identity = _still_valid(identity, base)
    if identity is not None and not auth.still_admin(identity, admins):
        # the password was changed or the administrator removed: their sessions end too
        _sign_out()
        st.session_state["signed_out_because"] = "password"
        identity = None
    if identity is None:

        def sign_in() -> None:
            # the link's parameters, kept for after the sign-in (which starts the pages
            # afresh, and Streamlit with them the address bar's parameters)
            st.session_state.setdefault(
                "link_params", {k: st.query_params.get_all(k) for k in st.query_params}
            )
            sessions.drop_cookie()
            if demo:
                demo_mode.sign_in_choices(store, config.dashboard)
            signin.render(base, admins, store, config.dashboard, demo=demo)

        # every page's path leads to the sign-in, and stays in the address bar with its
        # parameters: once signed in, the link opens the page it named
        st.navigation(
            [_page(sign_in, "signin.title", path, default=not i) for i, path in enumerate(PATHS)],
            position="hidden",
        ).run()
        return
    sessions.hand_over()
    if "link_params" in st.session_state:
        st.query_params.from_dict(st.session_state.pop("link_params"))
    # Every page gets this reader, never `base`: a student's keys go into every query.
    scoped = ScopedReader(base, identity.keys)
    with st.sidebar:
        st.caption(t("signout.who", who=identity.name, role=t(f"role.{identity.role}")))
        st.button(t("signout.button"), on_click=_sign_out, key="sign_out", icon=":material/logout:")
    st.title(t("title"))
    # The filters live in the entry script, not in a page: Streamlit keeps a page's own
    # widgets only while that page is shown, and the view must survive a page change. The
    # page is known first, so that it shows only the filters that apply to it.
    views: dict[str, ViewState] = {}
    if identity.role == "admin":
        links: dict[str, Any] = {}
        pages = [
            _page(
                lambda: overview.render(config, scoped, views["view"], links),
                "page.overview",
                "overview",
                default=True,
            ),
            _page(lambda: nodes.render(config, scoped, views["view"]), "page.nodes", "nodes"),
            _page(lambda: budgets.render(config, scoped, views["view"].tz), "page.budgets", "budgets"),
            _page(lambda: etl_status.render(scoped, views["view"].tz), "page.etl_status", "etl-status"),
            _page(
                lambda: statements.render(scoped, views["view"].tz, admin=True),
                "page.statements",
                "statements",
            ),
        ]
        links |= {"nodes": pages[1], "budgets": pages[2]}
    else:
        pages = [
            _page(
                lambda: my_usage.render(config, scoped, views["view"]),
                "page.my_usage",
                "my-usage",
                default=True,
            ),
            # how the nodes served the student's own requests (the reader is scoped to their keys)
            _page(lambda: nodes.render(config, scoped, views["view"], own_only=True), "page.nodes", "nodes"),
            # their own lines of each month's statement (the reader is scoped to their keys)
            _page(
                lambda: statements.render(scoped, views["view"].tz, admin=False),
                "page.statements",
                "statements",
            ),
        ]
    page = st.navigation(pages)
    views["view"] = panels.filters_sidebar(
        config, scoped, with_users=identity.role == "admin", whole_view=page.url_path in WHOLE_VIEW
    )
    panels.keep_page_widgets()
    page.run()


# every page's url_path, for the sign-in to keep a link's (the default first)
PATHS = ("overview", "nodes", "budgets", "etl-status", "my-usage", "statements")
# the pages the range and the filters apply to (a default page's url_path is ""): the others
# show the present state (budgets, the ETL's runs) and take only the time zone they write in
WHOLE_VIEW = frozenset({"", "nodes"})


def _page(run: Callable[[], None], title: str, path: str, *, default: bool = False) -> Any:
    return st.Page(run, title=t(title), url_path=path, default=default)


def _still_valid(identity: auth.Identity, base: StoreReader) -> auth.Identity | None:
    """A student's key checked again whenever the store changes (each ETL run copies
    LiteLLM's keys): a key blocked, expired or deleted since ends the session, and keys the
    person was given since count."""
    version = base.version()
    if identity.checked == version:
        return identity
    check = signin.student_check(identity.key, base) if identity.key else None
    if check is None or check.identity is None:
        _sign_out()
        st.session_state["signed_out_because"] = "key"
        return None
    renewed = replace(check.identity, store=identity.store, checked=version)
    st.session_state["identity"] = renewed
    return renewed


def _student(base: StoreReader, key_hash: str) -> auth.Identity | None:
    return signin.student_check(key_hash, base).identity


def _sign_out() -> None:
    """Ends the session everywhere (every tab, the cookie) and forgets this tab's state."""
    sessions.end()
    _clear()


def _clear() -> None:
    """Nothing of the session stays (identity, filters, highlight) but what the sign-in
    page has to say about why."""
    notices = {k: st.session_state[k] for k in NOTICES if k in st.session_state}
    st.session_state.clear()
    st.session_state.update(notices)


NOTICES = ("signed_out_because", "state_unavailable", "session_drop_cookie")


def _auth_secrets() -> Mapping[str, Any]:
    try:
        section = st.secrets.get("auth", {})
    except (FileNotFoundError, KeyError, st.errors.StreamlitSecretNotFoundError):
        return {}
    return dict(section)
