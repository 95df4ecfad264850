"""Which store the dashboard shows, and the demo's parts of the page.

With no LiteLLM database configured and nothing in the real store, the dashboard shows
the demo store (etl/demo.py), rebuilt every 20 minutes so that "the last 24 hours" stays filled.
Whatever reads a demo store says so on every page: the banner follows the store's own
marker, not how the app was started."""

from __future__ import annotations

import datetime as dt
import os
import threading
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path

import streamlit as st

from contract.store import DAY_FILE, STATE_FILE, requests_dir
from dashboard import auth, signin
from dashboard.strings import t
from etl import demo, simulate
from settings.config import Config, DashboardSettings
from settings.price_book import Price, load_price_book

DEFAULT_DEMO_STORE = Path("demo-store")
# the documented example price book, whose models are the demo's (etl/simulate_lab.py)
EXAMPLE_PRICE_BOOK = Path(__file__).resolve().parent.parent / "deploy" / "prices.example.toml"
MAX_AGE = dt.timedelta(minutes=20)  # rebuilt before the 30-minute stale warning
DEMO_ADMIN = auth.Identity(role="admin", name="demo")
_building = threading.Lock()


def store_to_show(config: Config, env: Mapping[str, str] | None = None) -> Path:
    """The real store, unless there is neither a database to fill it nor anything in it:
    then the demo store, built if missing or older than MAX_AGE."""
    env = os.environ if env is None else env
    if config.source.url or _has_data(config.store):
        return config.store
    path = Path(env.get("USAGE_DEMO_STORE") or DEFAULT_DEMO_STORE)
    with _building:  # one build, however many sessions arrive at once
        built = demo.built_at(path)
        if built is None or dt.datetime.now(dt.UTC) - built > MAX_AGE:
            with st.spinner(t("demo.building")):
                demo.build(path)
    return path


def prices(config: Config, store: Path) -> tuple[Price, ...]:
    """The price book to show `store` with: the configured one, else for the demo store
    the example's (so that the demo shows the figures at API prices), else none."""
    if config.price_book is not None or not demo.is_demo(store):
        return config.prices
    return _example_prices()


@cache
def _example_prices() -> tuple[Price, ...]:
    return load_price_book(EXAMPLE_PRICE_BOOK)


def banner(store: Path) -> bool:
    """The demo banner, when `store` is a demo store; True if it was shown."""
    if not demo.is_demo(store):
        return False
    st.warning(t("demo.banner"), icon=":material/science:")
    return True


def sign_in_choices(store: Path, settings: DashboardSettings) -> None:
    """On a demo's sign-in page: enter as the administrator, or as a simulated student
    with their made-up key (it goes through the real key check)."""
    st.markdown(t("demo.signin"))  # the banner above already says it is a demo: no second box
    if st.button(t("demo.as_admin"), type="primary", key="demo_admin"):
        signin.signed_in(replace(DEMO_ADMIN, store=signin.store_id(store)), settings)
        st.rerun()
    students = [p.user_id for p in simulate.PEOPLE if p.user_id != "prof.kim"]
    st.caption(t("demo.student_keys"))
    st.code("\n".join(demo.demo_key(user_id) for user_id in students[:3]), language=None)


def _has_data(store: Path) -> bool:
    """Looked up on every rerun, so cheap: a store once seen holding data is not
    searched again (the ETL never empties it), and the search stops at the first day."""
    if store in _REAL_STORES:
        return True
    if (store / STATE_FILE).is_file() or next(requests_dir(store).glob(f"date=*/{DAY_FILE}"), None):
        _REAL_STORES.add(store)
        return True
    return False


_REAL_STORES: set[Path] = set()
