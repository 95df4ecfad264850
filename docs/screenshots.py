"""Take the screenshots of the demo (README and docs/pages.md): the overview light, dark and
in Korean, the Nodes page, a student's own page, and the Statements page (November closed).

    .venv/bin/python -m docs.screenshots
    .venv/bin/python -m docs.screenshots statements     # only the shots named

Builds the demo store (etl/demo.py: simulated, and labelled as a demo on every page),
serves it with Streamlit and photographs it in headless Chromium at 1440 px. Korean needs
a CJK font (Debian's fonts-noto-cjk), else its letters are drawn as boxes.
"""

from __future__ import annotations

import datetime as dt
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from dashboard.demo_mode import EXAMPLE_PRICE_BOOK
from dashboard.strings import EN, Language
from dashboard.strings_ko import KO
from etl import demo
from ops.statements import close_month
from settings.config import Config, DashboardSettings
from settings.price_book import load_price_book
from tests.browser import chromium, streamlit_server, wait_until_rendered

DOCS = Path(__file__).resolve().parent
NOW = dt.datetime(2026, 12, 3, 9, 0, tzinfo=dt.UTC)
VIEW = "range=custom&from=2026-11-04&to=2026-12-03"
STUDENT = "minji.park"


@dataclass(frozen=True)
class Shot:
    name: str
    theme: str
    path: str  # the view (the link a person opens)
    page: str = ""  # the page then opened from the navigation ("page.nodes"); "" the first
    lang: Language = "en"
    student: bool = False  # signed in with a student's key, not as the administrator
    charts: int = 8
    height: int = 2700  # the page's height: Streamlit scrolls inside its own frame, not the window


SHOTS = (
    Shot("overview-light", "light", f"/?{VIEW}"),
    Shot("overview-dark", "dark", f"/?{VIEW}&highlight=junho.lee"),
    Shot("overview-korean", "light", f"/?{VIEW}&lang=ko", lang="ko"),
    # the verdicts and the first tab, the nodes' and models' tables (the rest are tabs)
    Shot("nodes", "light", f"/?{VIEW}", page="page.nodes", charts=8, height=1500),
    Shot("student", "light", f"/?{VIEW}", student=True, charts=4, height=2300),
    Shot("statements", "light", "/", page="page.statements", charts=0, height=1300),
)


def main() -> None:
    only = set(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "demo"
        demo.build(store, now=NOW)
        # November closed, as the lab would on 3 December (the demo's price book)
        config = Config(store=store, dashboard=DashboardSettings(timezone="Asia/Seoul"))
        close_month(replace(config, prices=load_price_book(EXAMPLE_PRICE_BOOK)), "2026-11", now=NOW)
        env = {"USAGE_STORE": str(store), "USAGE_TIMEZONE": "Asia/Seoul"}
        for shot in SHOTS:
            if only and shot.name not in only:
                continue
            with (
                streamlit_server(env, "--theme.base", shot.theme) as url,
                chromium(viewport={"width": 1440, "height": shot.height}, device_scale_factor=1) as page,
            ):
                text = KO if shot.lang == "ko" else EN
                page.goto(url + shot.path)
                wait_until_rendered(page)
                if shot.student:
                    page.get_by_role("textbox", name=text["signin.key"]).fill(demo.demo_key(STUDENT))
                    page.get_by_role("button", name=text["signin.submit"]).first.click()
                else:
                    page.get_by_role("button", name=text["demo.as_admin"]).click()
                if shot.page:  # a page of its own after signing in, as a person opens it
                    wait_until_rendered(page)
                    page.locator("[data-testid='stSidebarNav'] a", has_text=text[shot.page]).click()
                wait_until_rendered(page, charts=shot.charts)
                # the sidebar's widgets catch up with the view after a page change (4 s was
                # too short on a busy machine: the Nodes shot showed its defaults)
                page.wait_for_timeout(10000)
                page.screenshot(path=str(DOCS / f"{shot.name}.png"))
                print(f"wrote docs/{shot.name}.png")


if __name__ == "__main__":
    main()
