"""A newcomer's first contact: the README's run command, with no LiteLLM database, serves
the demo dashboard, labelled as a demo, in a real browser."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.browser import ARTIFACTS, REPO, chromium, free_port, serve, wait_until_rendered


def readme_run_command() -> list[str]:
    """The command the README gives for running the dashboard."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The two commands", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    assert block, "the README's two commands are in a bash block"
    [line] = [line for line in block.group(1).splitlines() if "dashboard" in line]
    return shlex.split(line.split("#", 1)[0])


def test_the_readme_run_command_serves_the_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LITELLM_DATABASE_URL", "DATABASE_URL", "USAGE_CONFIG", "USAGE_ADMIN_PASSWORD_HASH"):
        monkeypatch.delenv(name, raising=False)
    command = readme_run_command()
    assert command == ["make", "run"]
    port = free_port()
    env = {
        # Streamlit reads any of its options from STREAMLIT_* variables
        "STREAMLIT_SERVER_PORT": str(port),
        "STREAMLIT_SERVER_ADDRESS": "127.0.0.1",
        "STREAMLIT_SERVER_HEADLESS": "true",
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        "USAGE_STORE": str(tmp_path / "data"),
        "USAGE_DEMO_STORE": str(tmp_path / "demo-store"),
    }
    browser = chromium(viewport={"width": 1280, "height": 900})
    with serve(command, env, port, start_s=600) as url, browser as page:
        try:
            page.goto(url)
            wait_until_rendered(page, timeout_ms=120_000)
            banner = page.get_by_text("Demo data", exact=False).first
            assert banner.is_visible()
            page.get_by_role("button", name="Enter the demo as the administrator").click()
            wait_until_rendered(page, charts=4, timeout_ms=120_000)
            assert page.get_by_text("Demo data", exact=False).first.is_visible()
            assert page.locator("[data-testid='stMetric']").count() >= 6
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "first-run.png"), full_page=True)
            raise
    assert (tmp_path / "demo-store" / "demo.json").is_file()
    assert not (tmp_path / "data").exists()  # nothing written where a real store would go
