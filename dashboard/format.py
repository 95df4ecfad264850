"""Numbers for people: 1.2M tokens, $3.40, 95.1 %, 1.4 s. Exact values go in hover texts."""

from __future__ import annotations

import math
from typing import Any

from queries.metrics import Unit

_SUFFIXES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))


def missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def compact(value: float) -> str:
    """1234 -> 1.2k, 4_949_000 -> 4.9M; whole numbers below 1000 as they are."""
    if missing(value):
        return "—"
    sign = "-" if value < 0 else ""
    value = abs(value)
    for size, suffix in _SUFFIXES:
        if value >= size * 0.9995:
            shown = value / size
            return f"{sign}{shown:.1f}{suffix}" if shown < 100 else f"{sign}{shown:.0f}{suffix}"
    return f"{sign}{value:.0f}" if float(value).is_integer() else f"{sign}{value:.1f}"


def usd(value: float) -> str:
    """$3.40; amounts under a dollar keep three significant digits ($0.0203), large ones shorten."""
    if missing(value):
        return "—"
    if abs(value) >= 10_000:
        return "$" + compact(value)
    if value == 0 or abs(value) >= 1:
        return f"${value:,.2f}"
    digits = max(2, 1 - math.floor(math.log10(abs(value))) + 1)
    return f"${value:.{digits}f}"


def percent(ratio: float, digits: int = 1) -> str:
    return "—" if missing(ratio) else f"{ratio * 100:.{digits}f} %"


def duration_ms(value: float) -> str:
    """840 ms, 1.4 s, 2.5 min."""
    if missing(value):
        return "—"
    if value < 1000:
        return f"{value:.0f} ms"
    if value < 60_000:
        return f"{value / 1000:.1f} s"
    return f"{value / 60_000:.1f} min"


def age(seconds: float) -> str:
    """How long ago, coarsely: 12 min, 2.5 h, 3.0 d."""
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def rate(value: float) -> str:
    return "—" if missing(value) else f"{value:.1f} tok/s"


def by_unit(value: Any, unit: Unit) -> str:
    """A metric's value as a person reads it, by the unit the catalogue gives it."""
    match unit:
        case "usd":
            return usd(value)
        case "ratio":
            return percent(value)
        case "ms":
            return duration_ms(value)
        case "tokens_per_s":
            return rate(value)
        case _:
            return compact(value)


def change(current: Any, previous: Any, unit: Unit) -> str | None:
    """The delta against the previous period: relative for amounts (+12.3 %), in
    percentage points for ratios (+1.2 pp); None when there is nothing to compare."""
    if missing(current) or missing(previous):
        return None
    if unit == "ratio":
        return f"{(current - previous) * 100:+.1f} pp"
    if previous == 0:
        return None if current == 0 else "new"
    return f"{(current - previous) / previous * 100:+.1f} %"
