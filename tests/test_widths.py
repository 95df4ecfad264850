"""The pages at 1280 and 1440 px (docs/pages.md says 1280), in English and Korean
(issue 16, points 6 and 8): nothing a person reads is cut or turned on its side.

What is measured, and how:
- Share labels (the bars' "60.3 %"): every bar text of the Overview ends with "%" and its
  bounding box lies inside its chart's (a label past the chart's edge loses its end: the
  "%" was cut in the GPU nodes chart at 1280 px).
- Date axes: no tick label of a date axis carries a rotate transform (Plotly turns them
  when they would overlap; the Prompt caching chart's stood vertical at 1280 px), and
  neighbouring labels do not overlap either.
- Tables: Streamlit's dataframe is a glide-data-grid drawn on a canvas, so a cell has no
  box to measure. Two things are measurable: the grid's scroll area, `.dvn-scroller`,
  whose scrollWidth is the sum of the columns' widths and clientWidth the frame's; and the
  accessible table glide keeps in the canvas (`table[aria-colcount]`), which lists only
  the columns it draws. Glide sizes a column to its header and cells unless given a width
  (the pages give none narrower), so a column is cut only by the frame: the test asks that
  the columns fit the frame (no horizontal scroll, where the frame's edge cut a value in
  half) and that every column is drawn.

The store is the demo's (etl/demo.py: thirteen people, three nodes, every budget level),
what a lab looks like, signed in with the administrators' password.
"""

from __future__ import annotations

import itertools
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from dashboard import nodes
from dashboard.strings import EN, Language
from dashboard.strings_ko import KO
from etl import demo
from tests.browser import (
    ARTIFACTS,
    chromium,
    open_tab,
    sign_in_as_administrator,
    store_server,
    wait_until_rendered,
)

PASSWORD = "correct horse battery staple"
TEXTS = {"en": EN, "ko": KO}
# English plain, Korean with a highlighted user: the longest name's column on the Nodes
# page and the stacked share bars
VIEWS: dict[Language, dict[str, str]] = {"en": {}, "ko": {"lang": "ko", "highlight": "seoyeon.choi"}}
OVERVIEW_CHARTS = 8  # tokens, cache, requests, nodes, users, clients, matrix, models
NODES_CHARTS = 5
# the Nodes page's tabs with a chart over time, and with a table (dashboard/nodes.py)
DATED_TABS = ("load", "speed", "cache", "routing", "failures")
TABLE_TABS = ("table", "load", "bands", "cache", "routing")


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("widths") / "store"
    demo.build(store)
    with store_server(store, PASSWORD) as url:
        yield url


def sign_in(page: Any, lang: Language) -> None:
    sign_in_as_administrator(page, PASSWORD, TEXTS[lang], charts=OVERVIEW_CHARTS)


def open_page(page: Any, key: str, lang: Language, charts: int = 0) -> None:
    page.locator("[data-testid='stSidebarNav'] a", has_text=TEXTS[lang][key]).click()
    path = "/" + key.removeprefix("page.").replace("_", "-")
    page.wait_for_function(f"() => location.pathname === '{path}'", timeout=60_000)
    wait_until_rendered(page, charts=charts)
    page.wait_for_selector("[data-testid='stDataFrame'] .dvn-scroller", timeout=60_000)


# Each bar text and the box of its chart's SVG, in page pixels.
BAR_LABELS = """() => [...document.querySelectorAll("[data-testid='stPlotlyChart'] .js-plotly-plot")]
  .flatMap(plot => {
    const chart = plot.querySelector('svg.main-svg').getBoundingClientRect();
    return [...plot.querySelectorAll('text.bartext')].map(text => {
      const box = text.getBoundingClientRect();
      return {text: text.textContent, left: box.left, right: box.right, top: box.top,
              bottom: box.bottom, chart: [chart.left, chart.right, chart.top, chart.bottom]};
    });
  })"""

# Each date axis's tick labels: text, transform and horizontal extent, left to right.
DATE_TICKS = """() => [...document.querySelectorAll("[data-testid='stPlotlyChart'] .js-plotly-plot")]
  .filter(plot => plot.checkVisibility())
  .flatMap(plot => Object.entries(plot._fullLayout)
    .filter(([name, axis]) => /^xaxis\\d*$/.test(name) && axis.type === 'date')
    .map(([name, axis]) => [...plot.querySelectorAll(`g.${axis._id}tick text`)]
      .map(text => {
        const box = text.getBoundingClientRect();
        return {text: text.textContent, transform: text.getAttribute('transform') || '',
                left: box.left, right: box.right};
      })
      .sort((a, b) => a.left - b.left)))"""

# A table: its columns' total width against its frame's, and the columns drawn.
TABLE = """frame => {
    const scroller = frame.querySelector('.dvn-scroller');
    const table = frame.querySelector('table[aria-colcount]');
    return {columns: scroller.scrollWidth, frame: scroller.clientWidth,
            count: Number(table.getAttribute('aria-colcount')),
            drawn: [...table.querySelectorAll('thead th')].map(th => th.textContent)};
  }"""


def check_share_labels(page: Any, where: str) -> None:
    labels = page.evaluate(BAR_LABELS)
    assert labels, where
    for label in labels:
        left, right, top, bottom = label["chart"]
        assert label["text"].endswith("%"), (where, label)
        inside = (
            left <= label["left"]
            and label["right"] <= right
            and top <= label["top"]
            and label["bottom"] <= bottom
        )
        assert inside, (where, label)


def check_date_ticks(page: Any, where: str, *, some: bool = True) -> None:
    """The date axes on show (not in a tab not chosen); `some`: there must be one."""
    axes = page.evaluate(DATE_TICKS)
    assert (axes or not some) and all(axes), where
    for ticks in axes:
        for tick in ticks:
            assert "rotate" not in tick["transform"], (where, tick)
        for before, after in itertools.pairwise(ticks):
            assert before["right"] <= after["left"], (where, before, after)  # side by side, not over


def check_tables(page: Any, where: str, *, some: bool = True) -> None:
    """The tables on show (not in a tab not chosen); `some`: there must be one."""
    frames = page.locator("[data-testid='stDataFrame']:visible")
    assert frames.count() or not some, where
    for index in range(frames.count()):
        # glide draws a grid (and its accessible table) once it is on the screen
        frames.nth(index).scroll_into_view_if_needed()
        frames.nth(index).locator("table[aria-colcount]").wait_for(state="attached")
        table = frames.nth(index).evaluate(TABLE)
        assert table["columns"] <= table["frame"], (where, table)
        assert len(table["drawn"]) == table["count"], (where, table)


# Each card's label: the width its text needs against the width it is given.
CARD_LABELS = """() => [...document.querySelectorAll("[data-testid='stMetricLabel']")].map(label => {
    const text = label.querySelector('p') || label;
    return {text: text.textContent, needs: text.scrollWidth, has: text.clientWidth};
  })"""


def check_card_labels(page: Any, where: str) -> None:
    labels = page.evaluate(CARD_LABELS)
    assert labels, where
    for label in labels:
        assert label["needs"] <= label["has"], (where, label)  # else it ends in "..."


def check_line_breaks(page: Any, lang: Language) -> None:
    """Korean wraps between words: the demo banner's words were split mid-word."""
    banner = page.locator("[data-testid='stAlert'] p").first
    assert TEXTS[lang]["demo.banner"][-12:] in banner.inner_text()
    breaks = banner.evaluate("p => getComputedStyle(p).wordBreak")
    assert (breaks == "keep-all") == (lang == "ko"), breaks


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("width", [1280, 1440])
def test_labels_ticks_and_tables_fit_the_page(app_url: str, width: int, lang: Language) -> None:
    with chromium(viewport={"width": width, "height": 900}) as page:
        try:
            page.goto(f"{app_url}/?{urllib.parse.urlencode(VIEWS[lang])}")
            sign_in(page, lang)
            check_share_labels(page, f"overview {width} {lang}")
            check_line_breaks(page, lang)
            check_date_ticks(page, f"overview {width} {lang}")
            open_page(page, "page.nodes", lang, charts=NODES_CHARTS)
            for tab in nodes.TABS:  # each section in its tab, measured once on show
                open_tab(page, TEXTS[lang][f"nodes.tab.{tab}"])
                check_date_ticks(page, f"nodes {tab} {width} {lang}", some=tab in DATED_TABS)
                check_tables(page, f"nodes {tab} {width} {lang}", some=tab in TABLE_TABS)
            open_page(page, "page.budgets", lang)
            check_tables(page, f"budgets {width} {lang}")
            open_page(page, "page.etl_status", lang)
            check_tables(page, f"etl status {width} {lang}")
            check_card_labels(page, f"etl status {width} {lang}")
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"widths-{width}-{lang}-failure.png"), full_page=True)
            raise
