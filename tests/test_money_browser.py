"""Issue 17's money on the page, in a real browser, in English and Korean: the figures at
API prices on the Overview, the budget forecasts and rate limits on the Budgets page, and
a student's own forecast, busiest minute and cost at API prices on their page, with no
one else's name or key on it.

The store is the demo's (etl/demo.py: thirteen people with two keys each, every budget
level, a TPM and RPM limit on every budgeted key), priced with the example price book the
demo reads (deploy/prices.example.toml, dashboard/demo_mode.py)."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from dashboard import format as fmt
from dashboard.demo_mode import EXAMPLE_PRICE_BOOK
from dashboard.strings import EN, Language, t, use_language
from dashboard.strings_ko import KO
from etl import demo, simulate
from settings.price_book import load_price_book
from tests.browser import (
    ARTIFACTS,
    chromium,
    drawn_tables,
    sign_in_as_administrator,
    store_server,
    wait_until_rendered,
)

PASSWORD = "correct horse battery staple"
TEXTS: dict[Language, dict[str, str]] = {"en": EN, "ko": KO}
LANGS: tuple[Language, ...] = ("en", "ko")
OVERVIEW_CHARTS = 8  # tokens, cache, requests, nodes, users, clients, matrix, models
# $3.40, $0.065, $12.3K; the difference signed (+$1.20, -$0.35)
MONEY = re.compile(r"\$\d[\d,]*(\.\d+)?[KMB]?")
FORECASTS = ("runs_out", "lasts", "spent", "reset_due", "idle", "no_budget")
# minji.park: the busiest student, a $4 budget and the lab's TPM and RPM limits; her key
# is one of the three the demo's sign-in page offers
STUDENT = "minji.park"
STUDENT_KEY = demo.demo_key(STUDENT, 0)

# Every metric card: its label and its value as read.
METRICS = """() => [...document.querySelectorAll("[data-testid='stMetric']")].map(card => ({
    label: card.querySelector("[data-testid='stMetricLabel']").innerText.trim(),
    value: card.querySelector("[data-testid='stMetricValue']").innerText.trim(),
  }))"""


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("money") / "store"
    demo.build(store)
    with store_server(store, PASSWORD) as url:
        yield url


def url(app_url: str, lang: Language) -> str:
    return f"{app_url}/?{urllib.parse.urlencode({'lang': lang})}" if lang != "en" else f"{app_url}/"


def screenshot_on_failure(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"money-{name}-failure.png"
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot of the failure: {shot}")


def page_text(page: Any) -> str:
    text: str = page.locator("[data-testid='stApp']").inner_text()
    return text


def metrics(page: Any) -> dict[str, str]:
    return {card["label"]: card["value"] for card in page.evaluate(METRICS)}


def price_captions(lang: Language) -> set[str]:
    """The caption under the cards, for each day a price of the book was taken (the one
    shown is the newest day among the prices the range used)."""
    days = {price.taken for price in load_price_book(EXAMPLE_PRICE_BOOK)}
    with use_language(lang):
        return {str(t("api.caption", taken=fmt.day(day))) for day in days}


def check_api_panel(page: Any, lang: Language, *, student: bool) -> None:
    """The "At API prices" panel: three cards of money, the day the prices were taken,
    and its tabs (a student's: by model and by client only)."""
    texts = TEXTS[lang]
    page.get_by_text(texts["api.title"], exact=True).first.wait_for(timeout=60_000)
    # the cards may still be placeholders of a rerun: wait until each of them is drawn
    for label in ("api.card", "api.same_spend", "api.ratio"):
        page.locator("[data-testid='stMetricLabel']", has_text=texts[label]).first.wait_for(timeout=60_000)
    wait_until_rendered(page)
    cards = metrics(page)
    for label in ("api.card", "api.same_spend"):
        assert texts[label] in cards, (lang, label, cards)
        assert MONEY.fullmatch(cards[texts[label]]), (lang, label, cards[texts[label]])
    assert texts["api.ratio"] in cards, (lang, cards)
    assert re.fullmatch(r"\d+\.\d\d(x|배)", cards[texts["api.ratio"]]), (lang, cards[texts["api.ratio"]])
    shown = [caption for caption in price_captions(lang) if page.get_by_text(caption, exact=True).count()]
    assert len(shown) == 1, (lang, price_captions(lang))
    views = ("by_model", "by_client") if student else ("by_model", "by_client", "by_user", "by_node")
    for view in views:
        assert page.get_by_role("tab", name=texts[f"api.by.{view}"], exact=True).count() == 1, (lang, view)
    if student:
        for view in ("by_user", "by_node"):
            assert page.get_by_role("tab", name=texts[f"api.by.{view}"], exact=True).count() == 0, view


@pytest.mark.parametrize("lang", LANGS)
def test_overview_shows_the_cost_at_api_prices(app_url: str, lang: Language) -> None:
    with chromium(viewport={"width": 1440, "height": 1600}) as page:
        try:
            page.goto(url(app_url, lang))
            sign_in_as_administrator(page, PASSWORD, TEXTS[lang], charts=OVERVIEW_CHARTS)
            check_api_panel(page, lang, student=False)
        except BaseException:
            screenshot_on_failure(page, f"overview-{lang}")
            raise


@pytest.mark.parametrize("lang", LANGS)
def test_budgets_page_shows_forecasts_and_rate_limits(app_url: str, lang: Language) -> None:
    texts = TEXTS[lang]
    statuses = {texts[f"forecast.status.{forecast}"] for forecast in FORECASTS}
    with chromium(viewport={"width": 1440, "height": 1600}) as page:
        try:
            page.goto(url(app_url, lang))
            sign_in_as_administrator(page, PASSWORD, texts)
            page.locator("[data-testid='stSidebarNav'] a", has_text=texts["page.budgets"]).click()
            page.wait_for_function("() => location.pathname === '/budgets'", timeout=60_000)
            wait_until_rendered(page)
            page.get_by_text(texts["limits.title"], exact=True).wait_for(timeout=60_000)
            shown = drawn_tables(page)

            paced = [table for table in shown if texts["budgets.forecast"] in table["headers"]]
            assert paced, (lang, [table["headers"] for table in shown])
            # the keys' standing: the forecast beside the share used (and people's own budgets)
            assert texts["budgets.used"] in paced[0]["headers"], (lang, paced[0]["headers"])
            for table in paced:
                forecast = table["rows"][0][table["headers"].index(texts["budgets.forecast"])]
                assert forecast in statuses, (lang, table)
            dated = [table for table in shown if texts["budgets.runs_out"] in table["headers"]]
            assert dated, (lang, [table["headers"] for table in shown])  # the keys' pace
            limited = [table for table in shown if texts["limits.peak_tokens"] in table["headers"]]
            assert len(limited) == 1, (lang, [table["headers"] for table in shown])
            headers = limited[0]["headers"]
            assert texts["limits.refused_col"] in headers, (lang, headers)
            # the nearest key's busiest minute and its share of the TPM limit: 182,000 (91.0 %)
            peak = limited[0]["rows"][0][headers.index(texts["limits.peak_tokens"])]
            assert re.fullmatch(r"[\d,]+ \(\d+\.\d ?%\)", peak), (lang, peak)
        except BaseException:
            screenshot_on_failure(page, f"budgets-{lang}")
            raise


def sign_in_as_student(page: Any, lang: Language, key: str) -> None:
    """Through the sign-in form's student tab, as a person would."""
    texts = TEXTS[lang]
    wait_until_rendered(page)
    page.get_by_role("textbox", name=texts["signin.key"]).fill(key)
    page.locator("[data-testid='stForm']").nth(0).get_by_role("button", name=texts["signin.submit"]).click()
    page.wait_for_selector("[data-testid='stMetric']", timeout=60_000)
    wait_until_rendered(page)


@pytest.mark.parametrize("lang", LANGS)
def test_a_student_sees_their_own_forecast_limits_and_api_prices_only(app_url: str, lang: Language) -> None:
    texts = TEXTS[lang]
    # "At this pace (" / "지금 속도(", or the start of what a used-up or idle budget reads
    forecast_starts = tuple(
        text.split("{", maxsplit=1)[0]
        for key, text in texts.items()
        if key.startswith("forecast.") and not key.startswith("forecast.status.")
    )
    busiest_start = texts["limits.busiest"].split("{", maxsplit=1)[0]
    with chromium(viewport={"width": 1440, "height": 1600}) as page:
        try:
            page.goto(url(app_url, lang))
            sign_in_as_student(page, lang, STUDENT_KEY)
            check_api_panel(page, lang, student=True)
            text = page_text(page)

            own = [f"{STUDENT.split('.', maxsplit=1)[0]}-main", f"{STUDENT.split('.', maxsplit=1)[0]}-agents"]
            assert all(alias in text for alias in own), (lang, own)
            lines = [line.strip() for line in text.splitlines()]
            assert any(line.startswith(forecast_starts) for line in lines), (lang, forecast_starts)
            assert any(line.startswith(busiest_start) for line in lines), (lang, busiest_start)

            others = [person.user_id for person in simulate.PEOPLE if person.user_id != STUDENT]
            aliases = [f"{user.split('.')[0]}-{kind}" for user in others for kind in ("main", "agents")]
            leaked = [name for name in (*others, *aliases) if name in text]
            assert not leaked, (lang, leaked)
            assert STUDENT_KEY not in page.url
            assert STUDENT_KEY not in text
            assert STUDENT_KEY not in page.content()
        except BaseException:
            screenshot_on_failure(page, f"student-{lang}")
            raise
