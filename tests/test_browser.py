"""The page in a real browser: a click on a user's bar highlights them in every chart."""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from dashboard import auth, figures
from dashboard.format import LEVEL_HEX, BudgetLevel
from dashboard.strings import EN
from queries.runner import StoreReader
from tests import known_store, test_untrusted_text
from tests.browser import (
    ARTIFACTS,
    chart_data,
    chromium,
    known_store_server,
    streamlit_server,
    wait_until_rendered,
)
from tests.plotly_json import decode

SEOUL_NOV_21 = "/?range=custom&from=2026-11-21&to=2026-11-21&by=requests"
OTHER_CHARTS = ("tokens", "cache", "requests", "nodes", "clients", "models")


def click_bar(page: Any, key: str, label: str) -> None:
    """Click the middle of `label`'s bar (Plotly's drag layer swallows element clicks)."""
    labels = chart_data(page, key)[0]["y"]
    bar = page.locator(f".st-key-{key} g.trace.bars g.point path").nth(labels.index(label))
    box = bar.bounding_box()
    assert box is not None, f"no bar for {label}"
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def bar_values(page: Any, key: str) -> dict[str, float]:
    """Each bar's length by its label, as the chart in the page holds them now."""
    traces = page.evaluate(
        f"JSON.parse(JSON.stringify(document.querySelector('.st-key-{key} .js-plotly-plot')?.data || []))"
    )  # empty while a rerun redraws the chart (its element is briefly replaced)
    if not traces:
        return {}
    bars = decode(traces[0])
    return dict(zip(bars["y"], map(float, bars["x"]), strict=True))


def wait_for_bars(page: Any, key: str, expected: dict[str, float], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while (shown := bar_values(page, key)) != expected:
        assert time.monotonic() < deadline, f"{key} shows {shown}, not {expected}"
        page.wait_for_timeout(200)


# empty while a rerun redraws the chart (its element is briefly replaced), not an error
TOKENS = "(document.querySelector('.st-key-tokens .js-plotly-plot')?.data || [])"


def highlighted(page: Any, who: str) -> bool:
    return bool(page.evaluate(f"(who) => {TOKENS}.some(t => t.name === who)", who))


PASSWORD = "correct horse battery staple"


@pytest.fixture
def app_url(tmp_path: Path) -> Any:
    with known_store_server(tmp_path, PASSWORD) as url:
        yield url


def sign_in(page: Any, *, password: str | None = None, key: str | None = None) -> None:
    """Through the sign-in form, as a person would."""
    wait_until_rendered(page)
    if password is not None:
        page.get_by_role("tab", name="Administrator").click()
        page.get_by_role("textbox", name="Password").fill(password)
        page.locator("[data-testid='stForm']").nth(1).get_by_role("button", name="Sign in").click()
    else:
        page.get_by_role("textbox", name="Your LiteLLM key").fill(key or "")
        page.locator("[data-testid='stForm']").nth(0).get_by_role("button", name="Sign in").click()
    page.wait_for_selector("[data-testid='stMetric']", timeout=60_000)


def test_clicking_a_user_highlights_them_everywhere_and_clicking_again_clears(app_url: str) -> None:
    with chromium(viewport={"width": 1440, "height": 2400}) as page:
        try:
            page.goto(app_url + SEOUL_NOV_21)
            sign_in(page, password=PASSWORD)
            wait_until_rendered(page, charts=8)
            assert not highlighted(page, "bob")

            click_bar(page, "user_chart", "bob")
            page.wait_for_function(f"() => {TOKENS}.some(t => t.name === 'bob')", timeout=30_000)
            wait_until_rendered(page, charts=8)
            for key in OTHER_CHARTS:
                traces = chart_data(page, key)
                accent = [
                    t for t in traces if figures.ACCENT in str(t.get("line", {})) + str(t.get("marker", {}))
                ]
                assert accent, f"{key}: nothing drawn in the accent colour"
                assert any(t.get("name", "").startswith(("bob", "Cache hit rate (bob)")) for t in accent), key
            bars = chart_data(page, "user_chart")[0]
            colours = dict(zip(bars["y"], bars["marker"]["color"], strict=True))
            assert colours["bob"] == figures.ACCENT and colours["alice"] != figures.ACCENT
            assert page.locator(".st-key-matrix .shapelayer path").count() == 1  # bob's row outlined
            assert "highlight=bob" in page.url
            assert page.get_by_text("bob: 2 (66.7 % of all)").count() == 1

            click_bar(page, "user_chart", "bob")
            page.wait_for_function(f"() => !{TOKENS}.some(t => t.name === 'bob')", timeout=30_000)
            assert "highlight" not in page.url

            # the other pages open from the navigation, keeping the filters
            page.get_by_role("link", name="Nodes", exact=True).click()
            # drawn in its tab (Load), not the one on show
            page.wait_for_selector(".st-key-concurrency .js-plotly-plot", state="attached", timeout=60_000)
            wait_until_rendered(page, charts=5)
            assert "range=custom" in page.url and "/nodes" in page.url
            assert page.locator("[data-testid='stException']").count() == 0
            page.get_by_role("link", name="Budgets", exact=True).click()
            # not the Nodes page's own table: the Budgets page's caption, then its table
            page.get_by_text("keys: ").first.wait_for(timeout=60_000)
            page.wait_for_selector("[data-testid='stDataFrame']", timeout=60_000)
            assert "/budgets" in page.evaluate("window.location.pathname")
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            shot = ARTIFACTS / "highlight-failure.png"
            page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of the failure: {shot}")
            raise


def test_the_highlight_survives_a_filter_change(app_url: str) -> None:
    with chromium(viewport={"width": 1440, "height": 2400}) as page:
        try:
            page.goto(app_url + SEOUL_NOV_21 + "&highlight=alice")
            sign_in(page, password=PASSWORD)
            wait_until_rendered(page, charts=8)
            assert highlighted(page, "alice")
            page.get_by_label("GPU nodes").click()  # the sidebar's multiselect
            page.get_by_role("option", name="blackwell").click()
            page.wait_for_function("() => window.location.search.includes('node=blackwell')", timeout=30_000)
            wait_until_rendered(page, charts=8)
            assert highlighted(page, "alice") and "highlight=alice" in page.url
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "filter-failure.png"), full_page=True)
            raise


def test_a_student_sees_their_budget_and_no_other_name(app_url: str) -> None:
    with chromium(viewport={"width": 1366, "height": 2000}) as page:
        try:
            page.goto(app_url + SEOUL_NOV_21)
            sign_in(page, key=known_store.raw_key("alice"))
            wait_until_rendered(page, charts=7)
            bars = page.locator("[data-testid='stProgress']")
            assert bars.count() == 3
            assert "alice-laptop: $3.25 of $10.00 used (32.5 %), $6.75 left" in bars.first.inner_text()
            peers = chart_data(page, "peers_chart")[0]
            assert sorted(peers["y"]) == ["Student A", "You"]
            text = page.locator("[data-testid='stApp']").inner_text()
            assert "bob" not in text and "carol" not in text
            assert "sk-alice" not in page.url and "sk-alice" not in page.content()
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "student-failure.png"), full_page=True)
            raise


def fill(bar: Any) -> tuple[int, int, int]:
    """The drawn colour of a progress bar's filled part."""
    css: str = bar.locator("[data-testid='stProgressBarTrack'] > div").evaluate(
        "e => getComputedStyle(e).backgroundColor"
    )
    red, green, blue = (int(c) for c in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return red, green, blue


def hex_rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


@pytest.mark.parametrize(("who", "level"), [("alice", "ok"), ("bob", "near")])
def test_a_students_budget_bar_is_coloured_by_how_close_it_is_to_the_limit(
    app_url: str, who: str, level: BudgetLevel
) -> None:
    """Every bar was the theme's red: alice at 32 % looked as alarming as bob at 92 %. The
    colours are the administrators' Budgets table's (format.LEVEL_HEX)."""
    with chromium(viewport={"width": 1366, "height": 2000}) as page:
        try:
            page.goto(app_url + SEOUL_NOV_21)
            sign_in(page, key=known_store.raw_key(who))
            wait_until_rendered(page)
            first = page.locator("[data-testid='stProgress']").first
            assert fill(first) == hex_rgb(LEVEL_HEX[level])
            assert page.get_by_text(EN[f"budget.level.{level}"], exact=True).count() >= 1
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"budget-colour-{who}-failure.png"), full_page=True)
            raise


def test_switching_the_users_measure_redraws_their_bars_and_the_link(app_url: str, tmp_path: Path) -> None:
    """The measure switch reruns only the users' part of the page: its bars and the link
    must still follow, and a click on a bar afterwards still highlights everywhere."""
    tokens = StoreReader(tmp_path / "store").run("by_user", known_store.KST_NOV_21)
    expected = dict(zip(tokens["user"], tokens["total_tokens"].astype(float), strict=True))
    with chromium(viewport={"width": 1440, "height": 2400}) as page:
        try:
            page.goto(app_url + SEOUL_NOV_21)  # by=requests
            sign_in(page, password=PASSWORD)
            wait_until_rendered(page, charts=8)
            page.locator("[data-testid='stButtonGroup']").get_by_text("Tokens", exact=True).click()
            page.wait_for_function("() => window.location.search.includes('by=tokens')", timeout=30_000)
            wait_for_bars(page, "user_chart", expected)  # the bars redraw after the URL changes
            assert page.locator("[data-testid='stException']").count() == 0

            click_bar(page, "user_chart", "alice")
            page.wait_for_function(f"() => {TOKENS}.some(t => t.name === 'alice')", timeout=30_000)
            page.wait_for_function(
                "() => ['highlight=alice', 'by=tokens'].every(p => window.location.search.includes(p))",
                timeout=30_000,
            )

            # the link as copied, opened by someone else (no sign-in cookie): the same view
            page.context.clear_cookies()
            page.goto(page.url)
            sign_in(page, password=PASSWORD)
            wait_until_rendered(page, charts=8)
            wait_for_bars(page, "user_chart", expected)
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "measure-failure.png"), full_page=True)
            raise


EVIL_LINKS = """() => [...document.querySelectorAll('a, img, image')]
    .map(e => [e.tagName, e.getAttribute('href') || e.getAttribute('xlink:href')
                          || e.getAttribute('src') || ''])
    .filter(([tag, target]) => target.includes('evil') || (tag !== 'A' && target === 'x'))"""


def test_names_from_the_data_and_the_url_make_no_link_or_image_in_the_page(tmp_path: Path) -> None:
    """What the AppTest check (tests/test_untrusted_text.py) infers from the Markdown, in
    the DOM that Streamlit's renderer and Plotly really build."""
    store = test_untrusted_text.build(tmp_path / "store")
    env = {
        "USAGE_STORE": str(store),
        "USAGE_TIMEZONE": "Asia/Seoul",
        "USAGE_ADMIN_PASSWORD_HASH": auth.hash_password(PASSWORD),
    }
    query = urllib.parse.urlencode(
        {"highlight": test_untrusted_text.USER, "tz": "[t](https://evil.example/t)"}
        | {"user": [test_untrusted_text.USER, "![u](https://evil.example/u.png)"]}
        | {"range": "custom", "from": "2026-11-21", "to": "2026-11-21"},
        doseq=True,
    )
    with streamlit_server(env) as url, chromium(viewport={"width": 1440, "height": 2400}) as page:
        try:
            page.goto(f"{url}/?{query}")
            sign_in(page, password=PASSWORD)
            wait_until_rendered(page, charts=8)
            assert page.get_by_text("Highlighting").count() == 1
            assert page.locator("[data-testid='stSidebar'] [data-testid='stAlert']").count() >= 1
            assert page.evaluate(EVIL_LINKS) == []
            for name, shown in (("Nodes", ".st-key-concurrency .js-plotly-plot"), ("Budgets", "text=keys: ")):
                page.get_by_role("link", name=name, exact=True).click()
                page.wait_for_selector(shown, state="attached", timeout=60_000)  # Nodes: in a tab
                wait_until_rendered(page)
                assert page.locator("[data-testid='stException']").count() == 0
                assert page.evaluate(EVIL_LINKS) == [], name
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "untrusted-failure.png"), full_page=True)
            raise
