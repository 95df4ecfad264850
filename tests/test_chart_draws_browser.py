"""Each chart is computed once per click, laid out once (its labels inside the room its
figure reserved), and wears the page's theme, in a real browser (issue 30).

Streamlit's theme (a template made anew whenever a chart mounts) and numbers sent as typed
arrays each made Plotly compute and draw every chart twice per click: once when it
mounted, again when Streamlit handed it the same figure right after. The charts are drawn
with theme=None and the theme's look in their own layout (dashboard/panels/plot.py), so
the dark theme's colours are the page's style sheet's: checked here on the drawn page.
Plotly also laid out and drew every chart a second time within the same draw when its labels
needed wider margins than the figure's: the figures now reserve that room
(dashboard/figures/margins.py), and a chart drawn with wider margins than reserved fails here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dashboard.auth import hash_password
from dashboard.strings import EN
from tests import known_store
from tests.browser import ARTIFACTS, chromium, open_tab, store_server, streamlit_server, wait_until_rendered
from tests.test_browser import PASSWORD, SEOUL_NOV_21, click_bar, sign_in

CHARTS = ("tokens", "cache", "requests", "nodes", "user_chart", "clients", "matrix", "models")

# Counts, per chart (by its key), the draws that computed the chart's data anew (Plotly
# makes a new `calcdata` for those); kept across Streamlit's reruns (one document).
COUNT_COMPUTES = """() => {
  if (window.__computes) return;
  window.__computes = {};
  const hook = () => {
    for (const gd of document.querySelectorAll('.js-plotly-plot')) {
      if (gd.__counted || typeof gd.on !== 'function') continue;
      gd.__counted = true;
      const key = ((gd.closest('[class*="st-key-"]') || {}).className || '').match(/st-key-(\\S+)/);
      gd.on('plotly_afterplot', () => {
        if (gd.calcdata === gd.__calcdata) return;
        gd.__calcdata = gd.calcdata;
        const name = key ? key[1] : '?';
        window.__computes[name] = (window.__computes[name] || 0) + 1;
      });
    }
  };
  new MutationObserver(hook).observe(document.body, {subtree: true, childList: true});
  hook();
}"""


def settled(page: Any) -> None:
    """The run is over and nothing has been drawn for a second and a half (Streamlit
    hands a mounted chart its figure again a moment after mounting it)."""
    wait_until_rendered(page, charts=len(CHARTS))
    page.wait_for_timeout(1500)
    wait_until_rendered(page, charts=len(CHARTS))


def computes(page: Any) -> dict[str, int]:
    counted: dict[str, int] = page.evaluate(
        "() => { const c = window.__computes; window.__computes = {}; return c; }"
    )
    return counted


@pytest.fixture
def app_url(tmp_path: Path) -> Any:
    with store_server(known_store.build(tmp_path / "store"), PASSWORD) as url:
        yield url


def test_a_highlight_and_its_clearing_compute_each_chart_once(app_url: str) -> None:
    with chromium(viewport={"width": 1440, "height": 2400}) as page:
        try:
            page.goto(app_url + SEOUL_NOV_21)
            sign_in(page, password=PASSWORD)
            settled(page)
            page.evaluate(COUNT_COMPUTES)
            computes(page)

            click_bar(page, "user_chart", "bob")
            page.wait_for_function("() => location.search.includes('highlight=bob')", timeout=30_000)
            settled(page)
            assert computes(page) == dict.fromkeys(CHARTS, 1)  # every chart changed, once each

            page.get_by_role("button", name=EN["highlight.clear"]).click()
            page.wait_for_function("() => !location.search.includes('highlight')", timeout=30_000)
            settled(page)
            assert computes(page) == dict.fromkeys(CHARTS, 1)
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "chart-draws-failure.png"), full_page=True)
            raise


# What the drawn page shows in each theme: a tick label, a legend entry, a grid line and
# the chart's background, as the browser computes them (the figure holds the light ones).
DRAWN_COLOURS = """() => {
  const gd = document.querySelector('.st-key-tokens .js-plotly-plot');
  const style = (selector) => getComputedStyle(gd.querySelector(selector));
  return {tick: style('.ytick text').fill, legend: style('.legendtext').fill,
          grid: style('.gridlayer path').stroke, background: style('.main-svg').backgroundColor,
          page: getComputedStyle(document.querySelector('.stApp')).backgroundColor};
}"""
THEMES = {
    "light": {
        "tick": "rgb(128, 132, 149)",
        "legend": "rgb(38, 39, 48)",
        "grid": "rgb(230, 234, 241)",
        "background": "rgb(255, 255, 255)",
        "page": "rgb(255, 255, 255)",
    },
    "dark": {
        "tick": "rgb(230, 234, 241)",
        "legend": "rgb(250, 250, 250)",
        "grid": "rgb(49, 51, 63)",
        "background": "rgb(23, 22, 20)",
        "page": "rgb(23, 22, 20)",
    },
}


@pytest.mark.parametrize("theme", list(THEMES))
def test_the_charts_wear_the_pages_theme(tmp_path: Path, theme: str) -> None:
    env = {
        "USAGE_STORE": str(known_store.build(tmp_path / "store")),
        "USAGE_TIMEZONE": "Asia/Seoul",
        "USAGE_ADMIN_PASSWORD_HASH": hash_password(PASSWORD),
    }
    with (
        streamlit_server(env, "--theme.base", theme) as url,
        chromium(viewport={"width": 1280, "height": 1600}) as page,
    ):
        page.goto(url + SEOUL_NOV_21)
        sign_in(page, password=PASSWORD)
        wait_until_rendered(page, charts=len(CHARTS))
        assert page.evaluate(DRAWN_COLOURS) == THEMES[theme]


# Per drawn chart (its width above zero: a hidden tab's are not laid out), the margins
# Plotly drew it with against those its figure reserved.
MARGINS = """() => [...document.querySelectorAll("[data-testid='stPlotlyChart'] .js-plotly-plot")]
  .filter(gd => gd._fullLayout && gd.getBoundingClientRect().width > 0)
  .map(gd => {
    const key = ((gd.closest('[class*="st-key-"]') || {}).className || '').match(/st-key-(\\S+)/);
    const drawn = gd._fullLayout._size, reserved = gd.layout.margin;
    return {chart: key ? key[1] : '?', pushed: ['l', 'r', 't', 'b'].filter(m => drawn[m] > reserved[m])
      .map(m => `${m} ${reserved[m]} -> ${drawn[m]}`)};
  })"""


NOVEMBER = "/?range=custom&from=2026-11-01&to=2026-11-30&by=requests&highlight=bob"  # by day, highlighted


@pytest.mark.parametrize("width", [1280, 1440])
def test_every_chart_is_drawn_within_the_margins_its_figure_reserved(app_url: str, width: int) -> None:
    """The Overview's and the Nodes page's charts, in both languages, a day by the hour
    and a month by the day with a highlight: Plotly needed no more room for their labels
    than the figure reserved (else it lays the chart out and draws it twice)."""
    with chromium(viewport={"width": width, "height": 1600}) as page:
        page.goto(app_url + SEOUL_NOV_21)
        sign_in(page, password=PASSWORD)
        drawn: list[dict[str, Any]] = []
        for lang in ("en", "ko"):
            for view in (SEOUL_NOV_21, NOVEMBER):
                page.goto(f"{app_url}{view}&lang={lang}")
                settled(page)
                drawn += [{**c, "page": f"Overview {view} {lang}"} for c in page.evaluate(MARGINS)]
                page.goto(f"{app_url}/nodes{view[1:]}&lang={lang}")
                wait_until_rendered(page, charts=1)
                tabs = page.get_by_role("tab")
                for i in range(tabs.count()):
                    open_tab(page, tabs.nth(i).inner_text())
                    page.wait_for_timeout(500)
                    drawn += [{**c, "page": f"Nodes {view} {lang}"} for c in page.evaluate(MARGINS)]
        assert {c["chart"] for c in drawn} >= {*CHARTS, "concurrency", "failures", "prompt_bands"}
        pushed = [c for c in drawn if c["pushed"]]
        assert pushed == [], "\n".join(map(str, pushed))
