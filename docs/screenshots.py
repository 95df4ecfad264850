"""Take the README's screenshots: the overview of a simulated lab, light and dark.

    .venv/bin/python -m docs.screenshots

Builds a store from etl/simulate.py (clearly not real data), serves it with Streamlit
and photographs it in headless Chromium. Writes docs/overview-light.png and
docs/overview-dark.png.
"""

from __future__ import annotations

import datetime as dt
import secrets
import tempfile
from pathlib import Path

from dashboard.auth import hash_password
from etl.config import Config
from etl.run import ingest_rows
from etl.simulate import node_rules, simulate
from tests.browser import chromium, streamlit_server, wait_until_rendered

DOCS = Path(__file__).resolve().parent
NOW = dt.datetime(2026, 12, 3, 9, 0, tzinfo=dt.UTC)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        ingest_rows(Config(store=store, nodes=node_rules()), simulate(days=45, end=NOW))
        password = secrets.token_urlsafe(16)  # a throwaway administrator for this run
        env = {
            "USAGE_STORE": str(store),
            "USAGE_TIMEZONE": "Asia/Seoul",
            "USAGE_ADMIN_PASSWORD_HASH": hash_password(password),
        }
        view = "/?range=custom&from=2026-11-04&to=2026-12-03"
        for theme, query in (("light", view), ("dark", view + "&highlight=junho.lee")):
            with (
                streamlit_server(env, "--theme.base", theme) as url,
                chromium(viewport={"width": 1366, "height": 2550}, device_scale_factor=1) as page,
            ):
                page.goto(url + query)
                wait_until_rendered(page)
                page.get_by_role("tab", name="Administrator").click()
                page.get_by_role("textbox", name="Password").fill(password)
                page.locator("[data-testid='stForm']").nth(1).get_by_role("button", name="Sign in").click()
                wait_until_rendered(page, charts=8)
                page.wait_for_timeout(1500)
                page.screenshot(path=str(DOCS / f"overview-{theme}.png"))
                print(f"wrote docs/overview-{theme}.png")


if __name__ == "__main__":
    main()
