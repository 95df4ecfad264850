"""Every view parameter survives a language switch and every page change, in both
languages: in the URL and in the widgets that show it (issue 16, point 1).

The sidebar's choices are translated, and Streamlit keeps a choice in the browser as its
label: a switch must not leave a label behind that the other language no longer knows."""

from __future__ import annotations

import functools
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dashboard.strings import EN, LANGUAGE_NAMES, Language
from dashboard.strings_ko import KO
from tests.browser import (
    ARTIFACTS,
    chromium,
    known_store_server,
    sign_in_as_administrator,
    wait_until_rendered,
)

PASSWORD = "correct horse battery staple"
TEXTS = {"en": EN, "ko": KO}
PAGES = ("page.nodes", "page.budgets", "page.etl_status", "page.overview")
PRESENT_STATE = ("page.budgets", "page.etl_status")  # no range nor filters apply there

# One view per starting language, every parameter away from its default. The range is
# chosen in its box (as in the report), the measure by its buttons; the rest by the link.
VIEWS: dict[Language, dict[str, list[str]]] = {
    "en": {
        "range": ["30d"],
        "tz": ["Europe/Paris"],
        "user": ["alice"],
        "model": ["gpt-oss-120b"],
        "node": ["blackwell"],
        "client": ["OpenCode"],
        "highlight": ["alice"],
        "by": ["tokens"],
    },
    "ko": {
        "range": ["custom"],
        "from": ["2026-11-20"],
        "to": ["2026-11-21"],
        "tz": ["UTC"],
        "user": ["bob"],
        "model": ["qwen3-coder-30b"],
        "node": ["l40-a"],
        "client": ["Python HTTP"],
        "highlight": ["bob"],
        "by": ["requests"],
    },
}
# what the link says before the widgets are used: another range and the default measure
LINKED: dict[Language, dict[str, list[str]]] = {
    "en": {key: value for key, value in VIEWS["en"].items() if key != "by"} | {"range": ["month"]},
    "ko": {key: value for key, value in VIEWS["ko"].items() if key != "by"} | {"lang": ["ko"]},
}


@pytest.fixture
def app_url(tmp_path: Path) -> Any:
    with known_store_server(tmp_path, PASSWORD) as url:
        yield url


def eventually(check: Callable[[], None], timeout_s: float = 30) -> None:
    """`check` passes within `timeout_s` (the URL and widgets follow a rerun a moment later)."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            check()
            return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def shown_params(page: Any) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)


def check_view(page: Any, view: dict[str, list[str]], lang: Language, *, overview: bool, key: str) -> None:
    """The URL holds exactly `view` (and lang= for Korean), and each widget shows its part.
    A page of the present state (Budgets, ETL status) offers only the time zone, and says so."""
    text = TEXTS[lang]
    expected = view | ({"lang": ["ko"]} if lang == "ko" else {})
    assert shown_params(page) == expected
    sidebar = page.locator("[data-testid='stSidebar']")
    if key in PRESENT_STATE:
        assert sidebar.get_by_role("combobox", name=text["filters.timezone"]).input_value() == view["tz"][0]
        assert sidebar.get_by_role("combobox", name=text["filters.range"]).count() == 0
        assert sidebar.locator("[data-testid='stMultiSelect']").count() == 0
        assert sidebar.get_by_text(text["filters.not_here"]).count() == 1
        return
    assert (
        sidebar.get_by_role("combobox", name=text["filters.range"]).input_value()
        == (text[f"range.{view['range'][0]}"])
    )
    if view["range"] == ["custom"]:
        days = sidebar.locator("[data-testid='stDateInput'] input[type='date']")
        assert days.evaluate_all("inputs => inputs.map(i => i.value)") == [*view["from"], *view["to"]]
    assert sidebar.get_by_role("combobox", name=text["filters.timezone"]).input_value() == view["tz"][0]
    boxes = sidebar.locator("[data-testid='stMultiSelect']")
    for index, (dim, field) in enumerate((("user", "users"), ("model", "models"), ("node", "nodes"))):
        label, *chosen = boxes.nth(index).inner_text().split("\n")
        assert (label, [c for c in chosen if c]) == (text[f"filters.{field}"], view[dim]), field
    label, *chosen = boxes.nth(3).inner_text().split("\n")
    assert (label, [c for c in chosen if c]) == (text["filters.clients"], view["client"])
    if overview:
        measure = page.locator("[data-testid='stButtonGroup'] [role='radio'][aria-checked='true']")
        assert measure.inner_text() == text[f"users.by.{view['by'][0]}"]
        who = view["highlight"][0]
        assert page.get_by_text(text["highlight.active"].format(who=who).replace("**", "")).count() == 1


def sign_in(page: Any, lang: Language) -> None:
    sign_in_as_administrator(page, PASSWORD, TEXTS[lang])


def switch_to(page: Any, lang: Language) -> None:
    """The sidebar's language switch, as a person clicks it."""
    page.locator("[data-testid='stSidebar']").get_by_text(LANGUAGE_NAMES[lang], exact=True).click()
    page.wait_for_function(f"() => location.search.includes('lang=ko') === {str(lang == 'ko').lower()}")
    wait_until_rendered(page)


def open_page(page: Any, key: str, lang: Language) -> None:
    """Open the page `key` names from the navigation, as shown in `lang`."""
    page.locator("[data-testid='stSidebarNav'] a", has_text=TEXTS[lang][key]).click()
    path = "/" if key == "page.overview" else "/" + key.removeprefix("page.").replace("_", "-")
    page.wait_for_function(f"() => location.pathname === '{path}'", timeout=60_000)
    wait_until_rendered(page)
    assert page.locator("[data-testid='stException']").count() == 0, key


@pytest.mark.parametrize("start", ["en", "ko"])
def test_every_view_parameter_survives_a_language_switch_and_every_page(
    app_url: str, start: Language
) -> None:
    other: Language = "ko" if start == "en" else "en"
    view = VIEWS[start]
    with chromium(viewport={"width": 1440, "height": 2400}) as page:
        try:
            page.goto(f"{app_url}/?{urllib.parse.urlencode(LINKED[start], doseq=True)}")
            sign_in(page, start)
            text = TEXTS[start]
            sidebar = page.locator("[data-testid='stSidebar']")
            if view["range"] != ["custom"]:
                sidebar.get_by_role("combobox", name=text["filters.range"]).click()
                page.get_by_role("option", name=text[f"range.{view['range'][0]}"], exact=True).click()
                page.wait_for_function(f"() => location.search.includes('range={view['range'][0]}')")
                wait_until_rendered(page)
            buttons = page.locator("[data-testid='stButtonGroup']")
            buttons.get_by_text(text[f"users.by.{view['by'][0]}"], exact=True).click()
            page.wait_for_function(f"() => location.search.includes('by={view['by'][0]}')")
            wait_until_rendered(page)
            eventually(lambda: check_view(page, view, start, overview=True, key="page.overview"))

            switch_to(page, other)
            eventually(lambda: check_view(page, view, other, overview=True, key="page.overview"))

            for key in PAGES:
                open_page(page, key, other)
                eventually(
                    functools.partial(check_view, page, view, other, overview=key == "page.overview", key=key)
                )

            # and back, switched on a page without the measure's buttons, then on one
            # without the range and filters
            open_page(page, "page.nodes", other)
            switch_to(page, start)
            eventually(lambda: check_view(page, view, start, overview=False, key="page.nodes"))
            open_page(page, "page.budgets", start)
            switch_to(page, other)
            eventually(lambda: check_view(page, view, other, overview=False, key="page.budgets"))
            switch_to(page, start)
            open_page(page, "page.overview", start)
            eventually(lambda: check_view(page, view, start, overview=True, key="page.overview"))
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"view-navigation-{start}-failure.png"), full_page=True)
            raise
