"""Numbers for people, in the session's language: 1.2M tokens, $3.40, 95.1 %, 1.4 s in
English; 1.2만 토큰, 95.1%, 1.4초 in Korean. Exact values go in hover texts."""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from contract.measures import Unit
from dashboard.strings import current_language, t
from dashboard.untrusted import Markdown

_SUFFIXES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k"))
# Korean counts in myriads: 만 (10^4), 억 (10^8), 조 (10^12)
_KO_UNITS = ((1e12, "조"), (1e8, "억"), (1e4, "만"))


def missing(value: Any) -> bool:
    """None, NaN, NaT or pd.NA: a value there is none of (a time too: NaT is no float)."""
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # an array: a value, not a missing one
        return False


def compact(value: float) -> str:
    """12_345 -> 12.3k, 4_949_000 -> 4.9M (Korean: 1.2만, 495만, 3.4e8 -> 3.4억); below
    10,000 in full in both languages, 4,951 (English wrote 5.0k where Korean wrote 4,951)."""
    return Markdown(_compact(value))  # digits and a suffix: safe in Markdown as they are


EXACT_BELOW = 10_000  # counts below are written in full, in every language


def _compact(value: float) -> str:
    if missing(value):
        return "—"
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value < EXACT_BELOW:
        return sign + (f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}")
    if current_language() == "ko":
        return sign + _compact_ko(value)
    for size, suffix in _SUFFIXES:
        if value >= size * 0.9995:
            shown = value / size
            return f"{sign}{shown:.1f}{suffix}" if shown < 100 else f"{sign}{shown:.0f}{suffix}"
    return f"{sign}{value:.0f}" if float(value).is_integer() else f"{sign}{value:.1f}"


def _compact_ko(value: float) -> str:
    for size, suffix in _KO_UNITS:
        shown = value / size
        text = f"{shown:.1f}"
        if float(text) >= 100:  # 999,999 is 100만, 12,345,678 is 1,235만
            text = f"{shown:,.0f}"
        if float(text.replace(",", "")) >= 1:  # 99,999,999 is 1.0억, not 10,000만
            return text + suffix
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def usd(value: float) -> str:
    """$3.40 and $0.88: cents from ten cents up ($0.878 beside $0.68 read as two kinds of
    money); below, three significant digits ($0.0203) but no zeros past the cents ($0.065,
    not $0.0650); large amounts shorten."""
    # an amount's $ is followed by a digit or a sign: Streamlit never reads that as math
    return Markdown(_usd(value))


def _usd(value: float) -> str:
    if missing(value):
        return "—"
    if abs(value) >= 10_000:
        return "$" + compact(value)
    if value == 0 or abs(value) >= 0.1:
        return f"${value:,.2f}"
    digits = max(2, 1 - math.floor(math.log10(abs(value))) + 1)
    whole, decimals = f"{value:.{digits}f}".split(".")
    return f"${whole}.{decimals[:2]}{decimals[2:].rstrip('0')}"


def percent(ratio: float, digits: int = 1) -> str:
    """95.1 % (Korean: 95.1%)."""
    return "—" if missing(ratio) else t("unit.percent", value=f"{ratio * 100:.{digits}f}")


def duration_ms(value: float) -> str:
    """840 ms, 1.4 s, 2.5 min (Korean: 0.84초, 1.4초, 2.5분: seconds below one too, as
    "684ms" beside "2.5초" read as two kinds of time)."""
    if missing(value):
        return "—"
    if value < 1000 and current_language() == "ko":
        seconds = f"{value / 1000:.3f}".rstrip("0").rstrip(".")
        return t("unit.s", value=seconds if seconds != "0" else f"{value / 1000:.3g}")
    if value < 1000:
        return t("unit.ms", value=f"{value:.0f}")
    if value < 60_000:
        return t("unit.s", value=f"{value / 1000:.1f}")
    return t("unit.min", value=f"{value / 60_000:.1f}")


def age(seconds: float) -> str:
    """How long ago, coarsely: 12 min, 2.5 h, 3.0 d (Korean: 12분, 2.5시간, 3.0일)."""
    if seconds < 90 * 60:
        return t("unit.min", value=f"{seconds / 60:.0f}")
    if seconds < 48 * 3600:
        return t("unit.h", value=f"{seconds / 3600:.1f}")
    return t("unit.d", value=f"{seconds / 86400:.1f}")


def span(length: dt.timedelta) -> str:
    """A period's length in whole hours up to two days, else whole days: 24 h, 7 d
    (Korean: 24시간, 7일)."""
    hours = length.total_seconds() / 3600
    return t("unit.h", value=f"{hours:.0f}") if hours <= 48 else t("unit.d", value=str(length.days))


def rate(value: float) -> str:
    """118.4 tok/s (Korean: 118.4 토큰/초)."""
    return "—" if missing(value) else t("unit.tok_s", value=f"{value:.1f}")


def timestamp(value: Any, tz: str) -> str | None:
    """An instant as a local time, to the minute: 2026-12-03 15:05 (Korean: 2026년 12월 3일
    15:05, 24-hour as everywhere on the page); None for a missing one."""
    if value is None or pd.isna(value):
        return None
    local = pd.Timestamp(value).tz_convert(tz)
    return t(
        "date.minute", year=local.year, month=local.month, day=local.day, hour=local.hour, minute=local.minute
    )


# English month names, short (not calendar.month_abbr: that follows the server's locale)
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def day(value: dt.date, *, this_year: int | None = None) -> str:
    """A calendar day: 2026-12-03 (Korean: 2026년 12월 3일; 12월 3일 for a day of
    `this_year`, where space is short)."""
    key = "date.day_this_year" if value.year == this_year else "date.day"
    return t(key, year=value.year, month=value.month, day=value.day, abbr=MONTHS[value.month - 1])


_PERIOD = re.compile(r"(\d+)\s*(mo|s|m|h|d)")


def period(text: str | None) -> str:
    """A LiteLLM budget duration ("30d", "1mo", "24h") in the session's language (Korean:
    30일, 1개월, 24시간); anything else as LiteLLM wrote it."""
    if missing(text) or not str(text).strip():
        return "—"
    found = _PERIOD.fullmatch(str(text).strip())
    return t(f"period.{found[2]}", n=found[1]) if found else str(text)


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


MISSING = "—"  # what a table, card or hover shows for a value there is none of

# what the store writes for a request with no node, client or model (docs/store.md): a
# word of the page, translated in charts and tables alike, not a name from the data
UNKNOWN = {"unknown": "value.unknown", "unknown-model": "value.unknown_model"}


def name(value: Any) -> str:
    """A node's, client's or model's name as a table or chart shows it: the page's own
    word for the store's "unknown" and LiteLLM's "unknown-model", else the name."""
    return t(UNKNOWN[value]) if isinstance(value, str) and value in UNKNOWN else str(value)


def count(value: Any) -> str:
    """A whole number exactly, with thousands separators: 30,692 (tables; cards shorten it
    to 30.7k, Korean ones to 3.1만)."""
    return MISSING if missing(value) else f"{round(float(value)):,}"


def exact(value: Any, unit: Unit) -> str:
    """A metric's value in a table cell: as `by_unit` writes it on a card, but counts and
    tokens in full (30,692), since a table is where people read the exact figure."""
    return count(value) if unit in ("count", "tokens") else by_unit(value, unit)


def seconds(value: Any) -> str:
    """A length given in seconds, as `duration_ms` writes it: 840 ms, 12.5 s, 2.5 min."""
    return MISSING if missing(value) else duration_ms(float(value) * 1000)


def ticks(top: Any, unit: Unit = "count", *, most: int = 5) -> tuple[list[float], list[str]]:
    """An axis's ticks from 0 to `top`, at most `most` steps of a round size (1, 2 or 5
    times a power of ten; whole numbers for counts, so no 0.5 request), labelled as the
    page writes the unit: 20k and 1.2M (Korean 2만 and 120만), 840 ms and 1.5 s.
    Plotly's own labels can write neither 만/억 nor seconds above 1,000 ms."""
    top = 1.0 if missing(top) or float(top) <= 0 else float(top)
    magnitude = 10.0 ** math.floor(math.log10(top / most))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude * most >= top)
    if unit in ("count", "tokens"):
        step = max(step, 1.0)
    values = [round(i * step, 9) for i in range(math.ceil(top / step - 1e-9) + 1)]
    return values, [_tick(value, unit) for value in values]


def _tick(value: float, unit: Unit) -> str:
    if value == 0:
        return "0"
    text = duration_ms(value) if unit == "ms" else _compact(value)
    return re.sub(r"\.0(?=[^\d.,]*$)", "", text)  # 2k, 1억, 5 s: not 2.0k, 1.0억, 5.0 s


@dataclass(frozen=True)
class Change:
    """A card's delta: its text, and whether it gets an arrow (a change that rounds to
    zero is neutral: no arrow, no colour)."""

    text: str
    arrow: Literal["auto", "off"]


# The previous period is compared with only when it had at least this many requests and
# at least this share of the current period's: a near-empty period gives +886228 %.
MIN_PREVIOUS_REQUESTS = 20
MIN_PREVIOUS_SHARE = 0.05


def comparable(current_requests: Any, previous_requests: Any) -> bool:
    if missing(current_requests) or missing(previous_requests):
        return False
    previous = float(previous_requests)
    return previous >= MIN_PREVIOUS_REQUESTS and previous >= MIN_PREVIOUS_SHARE * float(current_requests)


def change(current: Any, previous: Any, unit: Unit) -> Change | None:
    """The delta against the previous period: relative for amounts (+12.3 %), in
    percentage points for ratios (+1.2 pp); None when there is nothing to compare."""
    if missing(current) or missing(previous):
        return None
    if unit == "ratio":
        value, key = (current - previous) * 100, "unit.pp"
    elif previous == 0:
        return None if current == 0 else Change(t("change.new"), "off")
    else:
        value, key = (current - previous) / previous * 100, "unit.percent"
    if round(value, 1) == 0:
        return Change(t(key, value="0.0"), "off")
    return Change(t(key, value=f"{value:+.1f}"), "auto")


# One status of a budget for every page (the Budgets table, the Overview's block, a
# student's badge and bars), in one colour scale: over (used up), at risk (`near`: 80 %
# used, or forecast to run out before its reset at the pace of the last 7 days), within.
BUDGET_NEAR = 0.8
BudgetLevel = Literal["none", "ok", "near", "over"]
LEVEL_COLORS: dict[BudgetLevel, str] = {"none": "gray", "ok": "green", "near": "orange", "over": "red"}
# the same levels as drawn colours (a bar's fill, a table's text): readable on light and dark
LEVEL_HEX: dict[BudgetLevel, str] = {"none": "#8C9BB0", "ok": "#2E9E5B", "near": "#E8871E", "over": "#D93F3F"}


def budget_level(used: Any, forecast: Any = None) -> BudgetLevel:
    """A budget's status from the share of it used and its forecast (queries/budgets.sql:
    `budget_used`, `forecast`; `none`: no budget, or one that cannot be read)."""
    if missing(used) or forecast in ("no_budget", "invalid"):
        return "none"
    share = float(used)
    if share >= 1 or forecast == "spent":
        return "over"
    return "near" if share >= BUDGET_NEAR or forecast == "runs_out" else "ok"
