"""The sign-in page loads the charts' and widgets' code while the person types
(dashboard/preload.py): in a real browser, Streamlit's chart and widget modules are
fetched before anyone signs in, nothing is drawn, and the Overview after the sign-in uses
what was loaded instead of fetching it again."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from dashboard import preload
from tests import known_store
from tests.browser import chromium, wait_until_rendered
from tests.test_sessions_browser import PASSWORD, server, submit


def test_streamlits_build_has_every_chunk_the_sign_in_page_preloads() -> None:
    # a Streamlit upgrade that renames them would silently preload nothing
    files = preload.chunk_files()
    assert [name.split(".", 1)[0] for name in files] == list(preload.CHUNKS)
    assert all((preload.STATIC_JS / name).is_file() for name in files)


def fetched(requests: list[str], chunk: str) -> int:
    return sum(1 for url in requests if url.rsplit("/", 1)[-1].startswith(f"{chunk}."))


def test_the_chart_code_loads_before_the_sign_in_and_only_once(tmp_path: Path) -> None:
    store = known_store.build(tmp_path / "store")
    requests: list[str] = []
    with server(store, tmp_path / "state") as url, chromium() as page:
        page.on("request", lambda request: requests.append(request.url))
        page.goto(url)
        wait_until_rendered(page)
        deadline = time.monotonic() + 30
        while not all(fetched(requests, c) for c in preload.CHUNKS) and time.monotonic() < deadline:
            page.wait_for_timeout(200)  # not time.sleep: Playwright delivers events only in its calls
        assert {c: fetched(requests, c) for c in preload.CHUNKS} == dict.fromkeys(preload.CHUNKS, 1)
        assert not page.locator(".js-plotly-plot").count()  # loaded, nothing drawn
        submit(page, password=PASSWORD)
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 8", timeout=60_000)
        charts: Any = page.evaluate("document.querySelectorAll('.js-plotly-plot').length")
        assert charts >= 8
        # the Overview's charts and widgets used what was loaded: nothing fetched again
        assert {c: fetched(requests, c) for c in preload.CHUNKS} == dict.fromkeys(preload.CHUNKS, 1)
