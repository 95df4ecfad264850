"""The answers at a glance in a real browser (issue 28): signed in as the administrator on
a lab of eight nodes (one slow against its peers, one down) and seven keys, six of them
needing attention, the first screen (1440x900, and 1280x800) holds, without scrolling, the
top user with their main client, every node's verdict, the API-price answer and the keys
over budget and at risk by name."""

from __future__ import annotations

import pytest

from tests import known_store, verdict_lab
from tests.browser import ARTIFACTS, chromium, store_server, streamlit_server, wait_until_rendered
from tests.test_browser import PASSWORD, sign_in

WEEK = "?range=custom&from=2026-12-01&to=2026-12-07"
EXPECTED = (
    "user3",  # the top user
    "mostly Claude Code",
    "l40-b is slow on qwen3-coder-30b",
    "retired is down",
    "spark is failing",
    "solo is slow",
    "good: blackwell, l40-a, l40-c",
    "too few requests to judge",
    "No price book",
    "Over budget: user0-laptop (user0) $12.00 of $10.00; shared-gpu $5.20 of $5.00; priya-claude",
    "At risk: user1-laptop (user1) runs out",
    "ta-notebook (ta) 85 % used",
    "Refused for budget in this range: priya-claude (41)",
)


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory: pytest.TempPathFactory) -> object:
    store = verdict_lab.build(tmp_path_factory.mktemp("glance-browser") / "store")
    with store_server(store, PASSWORD) as url:
        yield url


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (1280, 800)])
def test_the_first_screen_answers_the_professors_questions(lab_url: str, width: int, height: int) -> None:
    with chromium(viewport={"width": width, "height": height}) as page:
        try:
            page.goto(lab_url + WEEK)
            sign_in(page, password=PASSWORD)
            wait_until_rendered(page)
            block = page.locator(".st-key-glance")
            block.wait_for(timeout=60_000)
            text = block.inner_text()
            for expected in EXPECTED:
                assert expected in text, (expected, text)
            box = block.bounding_box()
            assert box is not None
            assert page.evaluate("window.scrollY") == 0
            assert box["y"] >= 0 and box["y"] + box["height"] <= height, (box, height)
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"glance-{width}x{height}.png"))
            raise


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (1280, 800)])
def test_a_students_first_screen_answers_theirs(lab_url: str, width: int, height: int) -> None:
    """user1: how much used and left, its status, when it resets and when it runs out at
    its pace, and which spend those figures count, all without scrolling."""
    with chromium(viewport={"width": width, "height": height}) as page:
        try:
            page.goto(lab_url + WEEK)
            sign_in(page, key=known_store.raw_key("user1"))
            wait_until_rendered(page)
            for text in (
                "at risk",
                "user1-laptop: $4.00 of $10.00 used (40.0 %), $6.00 left",
                "runs out",
                "LiteLLM's count since 2026-12-03 09:00, not the range of the cards below",
                "resets 2027-01-02 09:00 (every 30d)",
            ):
                found = page.get_by_text(text, exact=False).first
                box = found.bounding_box()
                assert box is not None and box["y"] + box["height"] <= height, (text, box)
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"student-glance-{width}x{height}.png"))
            raise


def test_a_wrong_key_is_said_in_the_first_screen_and_the_demo_shows_no_setup_command(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """On the demo's sign-in page at 1280x800, the refusal of a wrong key was under the
    fold (below the form), and the administrator's tab told visitors to run a command on
    a server they do not have."""
    empty = tmp_path_factory.mktemp("demo") / "store"  # no data: the demo is shown
    env = {"USAGE_STORE": str(empty), "USAGE_TIMEZONE": "Asia/Seoul"}
    with streamlit_server(env) as url, chromium(viewport={"width": 1280, "height": 800}) as page:
        try:
            page.goto(url)
            wait_until_rendered(page)
            page.get_by_role("textbox", name="Your LiteLLM key").fill("sk-not-a-key-of-this-lab")
            page.locator("[data-testid='stForm']").nth(0).get_by_role("button", name="Sign in").click()
            refusal = page.get_by_text("The lab's LiteLLM does not accept this key.", exact=False)
            refusal.wait_for(timeout=30_000)
            box = refusal.bounding_box()
            assert box is not None and box["y"] + box["height"] <= 800, box
            page.get_by_role("tab", name="Administrator").click()
            page.get_by_text("enter as the administrator with the button above").wait_for(timeout=10_000)
            assert "hash-password" not in page.inner_text("body")
        except Exception:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "demo-signin-1280x800.png"))
            raise
