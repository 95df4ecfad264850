"""Numbers as people read them."""

from __future__ import annotations

import math

import pytest

from dashboard import format as fmt


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (999, "999"),
        (1_234, "1.2k"),
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


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (3.4, "$3.40"),
        (0, "$0.00"),
        (0.0202566, "$0.0203"),
        (0.00025662, "$0.000257"),
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
        (120, 100, "count", "+20.0 %"),
        (80, 100, "usd", "-20.0 %"),
        (0.62, 0.60, "ratio", "+2.0 pp"),
        (5, 0, "count", "new"),
        (0, 0, "count", None),
        (None, 3, "count", None),
    ],
)
def test_change_against_the_previous_period(
    current: float, previous: float, unit: str, text: str | None
) -> None:
    assert fmt.change(current, previous, unit) == text  # type: ignore[arg-type]
