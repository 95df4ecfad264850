"""Issue 18's serving insight on the Nodes page, in a real browser, in English and Korean:
the load table, the prompt bands, prefix caching and routing, their charts drawn and
their values as tests/test_serving_insight.py computed them by hand for its store (alice
on the Blackwell, streamed, 40 % of her prompt tokens cached; bob on the L40s, never a
cached token reported)."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboard import nodes
from dashboard.strings import EN, Language
from dashboard.strings_ko import KO
from etl.run import ingest_rows
from settings.config import Config
from tests.browser import (
    ARTIFACTS,
    chromium,
    drawn_tables,
    open_tab,
    sign_in_as_administrator,
    store_server,
    wait_until_rendered,
)
from tests.known_store import NODES
from tests.test_serving_insight import ROWS

PASSWORD = "correct horse battery staple"
TEXTS: dict[Language, dict[str, str]] = {"en": EN, "ko": KO}
# the requests' Seoul day (10:00-12:00 UTC is 19:00-21:00 in Seoul)
VIEW = {"range": "custom", "from": "2026-11-20", "to": "2026-11-20"}
NODES_CHARTS = 8  # concurrency, saturation, speed, ttft, bands, prefix cache, shares, failures
# nodes (medians, tails), models, load, bands, prefix cache, routing, LiteLLM's overhead
NODES_TABLES = 9
# the new charts, by their keys (dashboard/serving.py)
INSIGHT_CHARTS = ("prompt_bands", "prefix_cache", "node_shares")

# the stable-concurrency sentence's measure and target as each language writes them
# (format.py): alice's requests were streamed, held to 3 s by their first token
STABLE: dict[Language, str] = {"en": "(TTFT p95 within 3.0 s)", "ko": "(TTFT p95 3.0초 이내)"}


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("serving-browser") / "store"
    ingest_rows(Config(store=store, nodes=NODES), ROWS)
    with store_server(store, PASSWORD) as url:
        yield url


def table_with(found: list[dict[str, Any]], header: str) -> dict[str, Any]:
    return next(table for table in found if header in table["headers"])


def open_nodes(page: Any, app_url: str, lang: Language) -> None:
    """Sign in as an administrator on the test's view in `lang`, then open the Nodes page
    from the navigation and wait until its charts are drawn."""
    texts = TEXTS[lang]
    page.goto(f"{app_url}/?{urllib.parse.urlencode({**VIEW, 'lang': lang})}")
    sign_in_as_administrator(page, PASSWORD, texts)
    page.locator("[data-testid='stSidebarNav'] a", has_text=texts["page.nodes"]).click()
    page.wait_for_function("() => location.pathname === '/nodes'", timeout=60_000)
    wait_until_rendered(page, charts=NODES_CHARTS)


def column(table: dict[str, Any], header: str) -> list[str]:
    index = table["headers"].index(header)
    return [row[index] for row in table["rows"]]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_nodes_page_shows_how_the_nodes_serve(app_url: str, lang: Language, tmp_path: Path) -> None:
    texts = TEXTS[lang]
    with chromium(viewport={"width": 1440, "height": 2400}) as page:
        try:
            open_nodes(page, app_url, lang)
            for title in ("serving.load", "serving.bands", "serving.cache", "serving.routing"):
                assert page.get_by_text(texts[title], exact=True).count() == 1, (lang, title)
            for key in INSIGHT_CHARTS:
                chart = page.locator(f".st-key-{key} .js-plotly-plot")
                assert chart.count() == 1 and chart.locator("g.trace").count() >= 1, (lang, key)
            # the tables are in the page's tabs: each drawn once its tab is chosen
            found = []
            for tab in ("table", "load", "bands", "cache", "routing"):
                open_tab(page, texts[f"nodes.tab.{tab}"])
                found += drawn_tables(page, at_least=NODES_TABLES)
            load = table_with(found, texts["col.in_flight"])  # the Blackwell, the first node
            assert column(load, texts["col.in_flight"]) == ["1", "2"]
            assert column(load, texts["col.requests"]) == ["3", "1"]  # a1, a3, a4; a2 beside a1
            assert float(column(load, texts["col.latency_p95_ms"])[0]) == pytest.approx(3800)
            assert float(column(load, texts["col.ttft_p95_ms"])[0]) == pytest.approx(490)
            # 3.8 s at 1 in flight is their latency; their first token's p95 is 490 ms there
            # and 300 ms at 2: both levels within 3 s, stable up to 2
            within = texts["serving.load.ok"].format(measure=texts["serving.load.short.ttft_p95_ms"])
            header = texts["col.within_target"].format(target="3.0 s" if lang == "en" else "3.0초")
            assert column(load, header) == [within, within]
            assert page.get_by_text(STABLE[lang]).count() >= 1, lang
            cache = table_with(found, texts["col.cache_hit_rate"])
            rates = dict(
                zip(
                    column(cache, texts["col.node_model"]),
                    column(cache, texts["col.cache_hit_rate"]),
                    strict=True,
                )
            )
            assert float(rates["blackwell · gpt-oss-120b"]) == pytest.approx(2000 / 4998)
            assert rates["l40-a · qwen3-coder-30b"] == ""  # no rate, never 0 %: "not reported"
            notes = dict(
                zip(column(cache, texts["col.node_model"]), column(cache, texts["col.note"]), strict=True)
            )
            assert notes["l40-a · qwen3-coder-30b"] == texts["serving.cache.not_reported"]
            # ten 1,200-token prompts from one key, no cached token: flagged
            assert notes["l40-b:8080 · qwen3-coder-30b"] == texts["serving.cache.uncached_repeats"]
            bands = table_with(found, texts["col.band"])
            assert set(column(bands, texts["col.band"])) == {"0-500", "500-2k", "2k-8k"}
            routed = table_with(found, texts["col.fallback_requests"])
            assert column(routed, texts["col.routing_known"]) == column(routed, texts["col.requests"])
            assert set(column(routed, texts["col.fallback_requests"])) == {"0"}
            overhead = table_with(found, texts["col.overhead_p50_ms"])  # LiteLLM times non-streamed only
            assert dict(
                zip(
                    column(overhead, texts["col.node"]),
                    column(overhead, texts["col.overhead_p50_ms"]),
                    strict=True,
                )
            ) == {
                "l40-b:8080": "20.1492",
                "blackwell": "",
                "l40-a": "20.1492",
            }
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"serving-{lang}-failure.png"), full_page=True)
            raise


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_every_section_of_the_nodes_page_is_a_click_away(app_url: str, lang: Language) -> None:
    """At 1280x800, the first screen shows the verdicts and, under them, a tab for each
    section (one under the other they were ~5,900 px); choosing one shows it, drawn to the
    page's width, and hides the others."""
    texts = TEXTS[lang]
    with chromium(viewport={"width": 1280, "height": 800}) as page:
        try:
            open_nodes(page, app_url, lang)
            verdicts = page.locator(".st-key-verdicts").bounding_box()
            assert verdicts is not None
            for name in nodes.TABS:
                tab = page.locator(".st-key-nodes_tabs").get_by_role("tab", name=texts[f"nodes.tab.{name}"])
                box = tab.bounding_box()  # in the viewport, nothing scrolled
                assert box is not None, (lang, name)
                assert verdicts["y"] < box["y"] and box["y"] + box["height"] <= 800, (lang, name, box)
                assert box["x"] >= 0 and box["x"] + box["width"] <= 1280, (lang, name, box)
            # the first tab is on show: the nodes' tables; the load table and failures are not
            assert page.get_by_text(texts["nodes.table"], exact=True).is_visible()
            assert page.locator(".st-key-failures").is_hidden()
            assert page.locator(".st-key-load_node").is_hidden()
            open_tab(page, texts["nodes.tab.failures"])
            chart = page.locator(".st-key-failures .js-plotly-plot")
            chart.wait_for(state="visible")
            drawn, column = chart.bounding_box(), page.locator(".st-key-nodes_tabs").bounding_box()
            assert drawn is not None and column is not None
            assert drawn["width"] > 0.9 * column["width"], (
                drawn,
                column,
            )  # the column's width, not a hidden 0
            assert page.get_by_text(texts["nodes.table"], exact=True).is_hidden()
            open_tab(page, texts["nodes.tab.load"])
            assert page.locator(".st-key-load_node").is_visible()
            assert page.get_by_text(texts["serving.load"], exact=True).is_visible()
            assert page.locator(".st-key-failures").is_hidden()
        except BaseException:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"nodes-tabs-{lang}-failure.png"))
            raise
