"""Numbers as people read them."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator
from typing import Literal

import pandas as pd
import pytest

from contract.measures import Unit
from dashboard import format as fmt
from dashboard.strings import use_language


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1_234, "1,234"),
        (9_999, "9,999"),
        (12_345, "12.3k"),
        (4_949_000, "4.9M"),
        (264_000_000, "264M"),
        (3.2e9, "3.2B"),
        (999_999, "1.0M"),
        (float("nan"), "—"),
        (None, "—"),
    ],
)
def test_compact(value: float, text: str) -> None:
    assert fmt.compact(value) == text


@pytest.mark.parametrize("value", [0, 7, 999, 4_951, 9_999])
def test_a_count_below_ten_thousand_reads_the_same_in_both_languages(value: int) -> None:
    """The same card read 5.0k in English and 4,951 in Korean."""
    with use_language("ko"):
        korean = fmt.compact(value)
    with use_language("en"):
        assert fmt.compact(value) == korean == f"{value:,}"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.4, "$3.40"),
        (0, "$0.00"),
        (0.0202566, "$0.0203"),
        (0.00025662, "$0.000257"),
        (0.4, "$0.40"),  # no zeros past the cents: not $0.400
        (0.878, "$0.88"),  # cents from ten cents up, as $0.68 beside it
        (0.0999, "$0.0999"),
        (0.065, "$0.065"),
        (0.02, "$0.02"),
        (1234.5, "$1,234.50"),
        (45_000, "$45.0k"),
    ],
)
def test_usd(value: float, text: str) -> None:
    assert fmt.usd(value) == text


def test_percent_duration_rate() -> None:
    assert fmt.percent(0.951) == "95.1 %"
    assert (fmt.duration_ms(840), fmt.duration_ms(1400), fmt.duration_ms(150_000)) == (
        "840 ms",
        "1.4 s",
        "2.5 min",
    )
    assert fmt.rate(118.44) == "118.4 tok/s"
    assert fmt.percent(math.nan) == "—"


@pytest.mark.parametrize(
    ("current", "previous", "unit", "text"),
    [
        (120, 100, "count", ("+20.0 %", "auto")),
        (80, 100, "usd", ("-20.0 %", "auto")),
        (0.62, 0.60, "ratio", ("+2.0 pp", "auto")),
        (5, 0, "count", ("new", "off")),
        (0, 0, "count", None),
        (None, 3, "count", None),
        # a change that rounds to zero is neutral: no sign, no arrow (never "-0.0 pp" in red)
        (0.60001, 0.6002, "ratio", ("0.0 pp", "off")),
        (100_000, 100_030, "count", ("0.0 %", "off")),
    ],
)
def test_change_against_the_previous_period(
    current: float, previous: float, unit: str, text: tuple[str, str] | None
) -> None:
    got = fmt.change(current, previous, unit)  # type: ignore[arg-type]
    assert (None if got is None else (got.text, got.arrow)) == text


@pytest.mark.parametrize(
    ("current", "previous", "compared"),
    [
        (1000, 900, True),
        (1000, 50, True),
        (1000, 49, False),
        (30, 19, False),
        (10, 20, True),
        (5, None, False),
    ],
)
def test_only_a_comparable_previous_period_is_compared_with(
    current: int, previous: int | None, compared: bool
) -> None:
    """At least 20 requests and 5 % of the current period's: a near-empty period before
    gave +886228.2 %."""
    assert fmt.comparable(current, previous) is compared


# --- in Korean --------------------------------------------------------------------------------


@pytest.fixture
def korean() -> Iterator[None]:
    with use_language("ko"):
        yield


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1_234, "1,234"),
        (12_345, "1.2만"),
        (999_999, "100만"),
        (4_949_000, "495만"),
        (12_345_678, "1,235만"),
        (99_999_999, "1.0억"),
        (3.4e8, "3.4억"),
        (3.2e9, "32.0억"),
        (1.5e12, "1.5조"),
        (-12_345, "-1.2만"),
        (float("nan"), "—"),
    ],
)
def test_compact_in_korean_counts_in_man_eok_jo(korean: None, value: float, text: str) -> None:
    assert fmt.compact(value) == text


def test_korean_units(korean: None) -> None:
    assert (fmt.usd(3.4), fmt.usd(0.0202566), fmt.usd(45_000)) == ("$3.40", "$0.0203", "$4.5만")
    assert fmt.percent(0.951) == "95.1%"
    assert (fmt.duration_ms(840), fmt.duration_ms(1400), fmt.duration_ms(150_000)) == (
        "0.84초",  # seconds below one too: "840ms" beside "1.4초" read as two kinds of time
        "1.4초",
        "2.5분",
    )
    assert (fmt.age(12 * 60), fmt.age(2.5 * 3600), fmt.age(3 * 86400)) == ("12분", "2.5시간", "3.0일")
    assert fmt.rate(118.44) == "118.4 토큰/초"
    assert (fmt.span(dt.timedelta(hours=24)), fmt.span(dt.timedelta(days=7))) == ("24시간", "7일")
    assert (fmt.period("30d"), fmt.period("1mo"), fmt.period("24h"), fmt.period(None)) == (
        "30일",
        "1개월",
        "24시간",
        "—",
    )


def test_korean_changes(korean: None) -> None:
    assert fmt.change(120, 100, "count") == fmt.Change("+20.0%", "auto")
    assert fmt.change(0.62, 0.60, "ratio") == fmt.Change("+2.0%p", "auto")
    assert fmt.change(5, 0, "count") == fmt.Change("신규", "off")


def test_dates_and_times_in_both_languages() -> None:
    instant = dt.datetime(2026, 12, 3, 6, 5, tzinfo=dt.UTC)
    assert fmt.timestamp(instant, "Asia/Seoul") == "2026-12-03 15:05"
    assert fmt.day(dt.date(2026, 12, 3)) == "2026-12-03"
    assert fmt.timestamp(None, "UTC") is None
    with use_language("ko"):
        assert fmt.timestamp(instant, "Asia/Seoul") == "2026년 12월 3일 15:05"  # 24-hour
        assert fmt.timestamp(instant, "UTC") == "2026년 12월 3일 06:05"
        assert fmt.day(dt.date(2026, 12, 3)) == "2026년 12월 3일"


def test_english_stays_as_it_was() -> None:
    with use_language("en"):
        assert (fmt.compact(12_345), fmt.percent(0.951), fmt.age(9000)) == ("12.3k", "95.1 %", "2.5 h")
        assert (fmt.span(dt.timedelta(days=7)), fmt.period("30d"), fmt.rate(1)) == ("7 d", "30d", "1.0 tok/s")


@pytest.mark.parametrize(
    ("used", "level"),
    [(None, "none"), (0.0, "ok"), (0.79, "ok"), (0.8, "near"), (0.92, "near"), (1.0, "over")],
)
def test_one_budget_scale_for_everyone(used: float | None, level: str) -> None:
    assert fmt.budget_level(used) == level
    assert fmt.LEVEL_COLORS[fmt.budget_level(0.92)] == "orange"  # not a calm blue at 92 %


# --- one way to write each kind of number, in tables as on cards --------------------------


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_table_cells_write_each_kind_once(lang: Literal["en", "ko"]) -> None:
    """Counts in full with separators (a table is where the exact figure is read), the
    rest as the cards write it; nothing at all as an em dash, never None or nan."""
    with use_language(lang):
        assert (fmt.count(30_692), fmt.count(200_000), fmt.count(999), fmt.count(4.6)) == (
            "30,692",
            "200,000",
            "999",
            "5",
        )
        assert fmt.exact(30_692, "tokens") == fmt.exact(30_692.0, "count") == "30,692"
        assert fmt.exact(0.6097, "ratio") == fmt.percent(0.6097)
        assert fmt.exact(11_695, "ms") == fmt.duration_ms(11_695) == ("11.7 s" if lang == "en" else "11.7초")
        assert fmt.exact(0.065, "usd") == "$0.065" and fmt.exact(2.04, "usd") == "$2.04"
        assert fmt.seconds(12.46) == fmt.duration_ms(12_460)
        for nothing in (None, math.nan, float("nan")):
            assert {fmt.count(nothing), fmt.exact(nothing, "ms"), fmt.seconds(nothing)} == {fmt.MISSING}
    assert fmt.MISSING == "—"


@pytest.mark.parametrize(
    ("top", "unit", "lang", "texts"),
    [
        (3, "count", "en", ["0", "1", "2", "3"]),  # whole requests: no 0.5
        (0.4, "count", "en", ["0", "1"]),
        (None, "count", "en", ["0", "1"]),
        (13, "count", "ko", ["0", "5", "10", "15"]),
        (30_692, "tokens", "en", ["0", "10k", "20k", "30k", "40k"]),
        (30_692, "tokens", "ko", ["0", "1만", "2만", "3만", "4만"]),
        (2.6e8, "tokens", "ko", ["0", "1억", "2억", "3억"]),
        (11_695, "ms", "en", ["0", "5 s", "10 s", "15 s"]),
        (11_695, "ms", "ko", ["0", "5초", "10초", "15초"]),
        (840, "ms", "en", ["0", "200 ms", "400 ms", "600 ms", "800 ms", "1 s"]),
    ],
)
def test_axis_ticks_write_units_as_the_cards(
    top: float | None, unit: Unit, lang: Literal["en", "ko"], texts: list[str]
) -> None:
    with use_language(lang):
        values, labels = fmt.ticks(top, unit)
    assert labels == texts
    assert values[0] == 0 and values[-1] >= (top or 0) and len(values) == len(labels)


def test_a_missing_time_is_missing_like_a_missing_number() -> None:
    """NaT is no float: an empty time (no prices used in the range, no reset) was taken
    for a value and written as a date of NaN, which broke the page."""
    assert all(fmt.missing(v) for v in (None, float("nan"), pd.NaT, pd.NA))
    assert not any(fmt.missing(v) for v in (0, 0.0, "", "x", pd.Timestamp("2026-12-05"), [1, 2]))
