"""People choose light or dark themselves: the main menu offers the theme (docs/pages.md
promises Streamlit's own switch), and nothing for developers (no "Deploy")."""

from __future__ import annotations

from pathlib import Path

from tests.browser import chromium, known_store_server, wait_until_rendered


def test_the_menu_offers_light_and_dark_and_dark_turns_the_page_dark(tmp_path: Path) -> None:
    with known_store_server(tmp_path, "a password nobody types here") as url, chromium() as page:
        page.goto(url)
        wait_until_rendered(page)
        assert page.get_by_text("Deploy", exact=True).count() == 0
        page.locator("[data-testid='stMainMenu']").first.click()
        dark = page.locator("[data-testid='stMainMenuItem-theme-Dark']")
        dark.wait_for(timeout=10_000)
        assert page.locator("[data-testid='stMainMenuItem-theme-Light']").count() == 1
        dark.click()
        page.wait_for_timeout(1_000)
        background = page.evaluate(
            "getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
        )
        red, green, blue = (int(c) for c in background.removeprefix("rgb(").rstrip(")").split(",")[:3])
        assert red + green + blue < 3 * 80, background  # a dark page
