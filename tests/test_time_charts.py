"""The time charts as a person reads them in the browser (issue 16, points 3 and 5): a
range draws its whole buckets and no sliver of an extra one, every time chart of a page
covers the same buckets, a ratio in a bucket without traffic is a gap (not 0 %) while a
lone bucket with traffic still shows, and the cache-hit-rate line stands out in dark."""

from __future__ import annotations

import datetime as dt
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from etl.run import ingest_rows
from settings.config import Config
from tests import known_store
from tests.browser import (
    ARTIFACTS,
    chart_data,
    chromium,
    known_store_server,
    store_server,
    wait_until_rendered,
)
from tests.plotly_json import decode
from tests.test_browser import sign_in

PASSWORD = "correct horse battery staple"
SEOUL = ZoneInfo("Asia/Seoul")
TIME_CHARTS = ("tokens", "cache", "requests")  # the Overview's charts over time


def recent_rows(now: dt.datetime) -> list[dict[str, Any]]:
    """Requests today, yesterday and the day before (Seoul), one 12 days ago (outside
    every range below but 30 days): a line over three days, then days without traffic."""
    local_noon = dt.datetime.combine(now.astimezone(SEOUL).date(), dt.time(12), SEOUL)
    midnight = local_noon.replace(hour=0)
    starts = [midnight + (now - midnight) / 2] + [  # today, whatever the hour
        (local_noon - dt.timedelta(days=days)).astimezone(dt.UTC) for days in (1, 2, 12)
    ]
    return [
        known_store.request(
            "vllm_streamed_reasoning_cached",
            "alice",
            start.astimezone(dt.UTC).replace(tzinfo=None),
            request_id=f"recent-{index}",
            user_agent="opencode/0.15.2",
            usage=(1000, 250 * (index + 1), 300, 0),
            spend=0.01,
            duration_ms=2000,
            ttft_ms=400,
        )
        for index, start in enumerate(starts)
    ]


@pytest.fixture(scope="module")
def recent_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("recent") / "store"
    ingest_rows(Config(store=store, nodes=known_store.NODES), recent_rows(dt.datetime.now(dt.UTC)))
    with store_server(store, PASSWORD) as url:
        yield url


def traces(page: Any, key: str) -> list[dict[str, Any]]:
    return [decode(trace) for trace in chart_data(page, key)]


def x_range(page: Any, key: str) -> list[str]:
    axis: list[str] = page.evaluate(
        f"[...document.querySelector('.st-key-{key} .js-plotly-plot')._fullLayout.xaxis.range]"
    )
    return axis


def cache_line(page: Any) -> dict[str, Any]:
    (line,) = [t for t in traces(page, "cache") if t.get("yaxis") == "y2"]
    return line


def open_overview(page: Any, url: str, params: dict[str, str]) -> None:
    page.goto(f"{url}/?{urllib.parse.urlencode(params)}")
    sign_in(page, password=PASSWORD)
    wait_until_rendered(page, charts=len(TIME_CHARTS))


def failed(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"time-charts-{name}-failure.png"), full_page=True)


@pytest.mark.parametrize(("range_key", "buckets"), [("24h", 24), ("7d", 7), ("30d", 30)])
def test_a_range_draws_its_whole_buckets_in_every_time_chart(
    recent_url: str, range_key: str, buckets: int
) -> None:
    today = dt.datetime.now(SEOUL).date()
    with chromium(viewport={"width": 1440, "height": 2400}) as page:
        try:
            open_overview(page, recent_url, {"range": range_key})
            drawn = {key: traces(page, key)[0]["x"] for key in TIME_CHARTS}
            assert {key: len(x) for key, x in drawn.items()} == dict.fromkeys(TIME_CHARTS, buckets)
            if range_key != "24h":  # day buckets: the last is today, the first whole
                first = today - dt.timedelta(days=buckets - 1)
                assert str(drawn["requests"][0]).startswith(first.isoformat())
                assert str(drawn["requests"][-1]).startswith(today.isoformat())
            # every chart spans the same time, so their bars and lines line up
            assert len({tuple(x_range(page, key)) for key in TIME_CHARTS}) == 1
        except BaseException:
            failed(page, range_key)
            raise


def test_a_bucket_without_traffic_is_a_gap_in_the_cache_hit_rate(recent_url: str) -> None:
    with chromium(viewport={"width": 1440, "height": 2400}) as page:
        try:
            open_overview(page, recent_url, {"range": "7d"})
            rates = cache_line(page)["y"]
            # four days without a request are gaps, not 0 %; the three days with traffic
            # carry their rate (a quarter, half and three quarters of the prompt cached)
            assert [r is None or r != r for r in rates] == [True] * 4 + [False] * 3  # noqa: PLR0124  NaN
            assert [round(r, 2) for r in rates[4:]] == [0.75, 0.5, 0.25]
            assert cache_line(page).get("connectgaps") in (None, False)
        except BaseException:
            failed(page, "gap")
            raise


def test_a_lone_hour_with_traffic_shows_its_cache_hit_rate(tmp_path: Path) -> None:
    """Seoul's Nov 21 has prompts at 00h and 10h only: a line alone draws nothing for a
    point between two gaps, so each must be marked."""
    with (
        known_store_server(tmp_path, PASSWORD) as url,
        chromium(viewport={"width": 1440, "height": 2400}) as page,
    ):
        try:
            open_overview(page, url, {"range": "custom", "from": "2026-11-21", "to": "2026-11-21"})
            assert len([r for r in cache_line(page)["y"] if r is not None and r == r]) == 2  # noqa: PLR0124
            line = page.locator(".st-key-cache .scatterlayer g.trace").last
            assert line.locator("path.point").count() == 2  # both hours visible as points
        except BaseException:
            failed(page, "lone-hour")
            raise


def test_the_cache_hit_rate_line_stands_out_on_the_dark_theme(recent_url: str) -> None:
    with chromium(viewport={"width": 1440, "height": 2400}) as page:
        try:
            open_overview(page, recent_url, {"range": "7d"})
            page.locator("[data-testid='stMainMenu']").first.click()
            page.locator("[data-testid='stMainMenuItem-theme-Dark']").click()
            wait_until_rendered(page, charts=len(TIME_CHARTS))
            page.wait_for_timeout(1_000)
            background = rgb(
                page.evaluate(
                    "getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor"
                )
            )
            assert sum(background) < 3 * 80, background  # the page is dark
            rate = page.locator(".st-key-cache .scatterlayer g.trace").last
            assert rate.locator("path.point").count() == 3  # the three days with traffic
            line = rate.locator("path.js-line")
            assert line.count() == 1 and "L" in (line.get_attribute("d") or "")
            stroke = rgb(line.evaluate("path => getComputedStyle(path).stroke"))
            assert contrast(stroke, background) >= 3, (stroke, background)  # WCAG's for graphics
        except BaseException:
            failed(page, "dark")
            raise


def rgb(css: str) -> tuple[int, int, int]:
    red, green, blue = (int(float(c)) for c in css[css.index("(") + 1 : css.index(")")].split(",")[:3])
    return red, green, blue


def contrast(one: tuple[int, int, int], other: tuple[int, int, int]) -> float:
    """WCAG 2's contrast ratio of two colours."""

    def luminance(colour: tuple[int, int, int]) -> float:
        linear = [
            c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in colour
        ]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)
