"""The URL is the view: parse what a link asks for, ignore what it cannot mean, write it back."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from dashboard.strings import use_language
from dashboard.view_state import RangeKey, ViewState, parse, parse_language, to_params

KNOWN = {"user": ["kim", "lee"], "model": ["gpt-oss-120b"], "node": ["blackwell"], "client": ["OpenCode"]}
NOW = dt.datetime(2026, 12, 3, 9, 7, 30, tzinfo=dt.UTC)


def test_a_full_link_round_trips() -> None:
    params = {
        "range": ["30d"],
        "tz": ["UTC"],
        "user": ["kim", "lee"],
        "node": ["blackwell"],
        "highlight": ["kim"],
        "by": ["tokens"],
    }
    state, notices = parse(params, default_tz="Asia/Seoul", known=KNOWN)
    assert notices == []
    assert (state.range, state.tz, state.users, state.nodes, state.highlight, state.by) == (
        "30d",
        "UTC",
        ("kim", "lee"),
        ("blackwell",),
        "kim",
        "tokens",
    )
    assert to_params(state, default_tz="Asia/Seoul") == params


def test_defaults_stay_out_of_the_link() -> None:
    assert to_params(ViewState(tz="Asia/Seoul"), default_tz="Asia/Seoul") == {}


@pytest.mark.parametrize(
    ("params", "notice"),
    [
        ({"range": ["forever"]}, "range='forever'"),
        ({"range": ["custom"], "from": ["2026-11-30"], "to": ["2026-11-01"]}, "custom range"),
        ({"range": ["custom"], "from": ["yesterday"]}, "custom range"),
        ({"tz": ["Mars/Olympus"]}, "tz='Mars/Olympus'"),
        ({"tz": ["localtime"]}, "tz='localtime'"),
        ({"user": ["kim", "mallory"]}, "no user 'mallory'"),
        ({"highlight": ["mallory"]}, "highlight='mallory'"),
        ({"by": ["vibes"]}, "by='vibes'"),
    ],
)
def test_what_cannot_be_used_is_ignored_with_a_notice(params: dict[str, list[str]], notice: str) -> None:
    state, notices = parse(params, default_tz="Asia/Seoul", known=KNOWN, zones=["Asia/Seoul", "UTC"])
    assert len(notices) == 1 and notice in notices[0]
    assert state.range in ("7d", "custom") and state.tz == "Asia/Seoul"
    assert "mallory" not in state.users and state.highlight is None


def test_the_last_24_hours_are_24_whole_local_hours_ending_on_the_next_quarter_hour() -> None:
    """The range ends at the next quarter hour (one query, one cache entry, per 15 minutes)
    and starts on a local hour: 24 hour bars, this hour the last; it drew a 25th sliver."""
    filters = ViewState(range="24h", tz="Asia/Seoul").filters(NOW)  # 09:0x UTC
    assert filters.end == dt.datetime(2026, 12, 3, 9, 15, tzinfo=dt.UTC)
    assert filters.start == dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.UTC)
    assert filters.bucket_size == "hour"
    india = ViewState(range="24h", tz="Asia/Kolkata").filters(NOW)  # UTC+5:30: 14:3x local
    assert india.start == dt.datetime(2026, 12, 2, 9, 30, tzinfo=dt.UTC)


@pytest.mark.parametrize(("key", "days"), [("7d", 7), ("30d", 30)])
def test_day_ranges_are_whole_local_days_with_today_the_last(key: RangeKey, days: int) -> None:
    """ "Last 7 days" is 7 day buckets: from local midnight six days ago to now; it drew an
    eighth, near-empty one at its start."""
    filters = ViewState(range=key, tz="Asia/Seoul").filters(NOW)  # Dec 3, 18:0x KST
    first = dt.date(2026, 12, 3) - dt.timedelta(days=days - 1)
    assert filters.start == dt.datetime.combine(first, dt.time(), ZoneInfo("Asia/Seoul")).astimezone(dt.UTC)
    assert filters.end == dt.datetime(2026, 12, 3, 9, 15, tzinfo=dt.UTC)
    assert filters.bucket_size == "day"


def test_a_custom_range_is_whole_local_days() -> None:
    state, _ = parse(
        {"range": ["custom"], "from": ["2026-11-21"], "to": ["2026-11-22"]},
        default_tz="Asia/Seoul",
        known=KNOWN,
    )
    filters = state.filters(NOW)
    assert filters.start == dt.datetime(2026, 11, 20, 15, 0, tzinfo=dt.UTC)  # midnight in Seoul
    assert filters.end == dt.datetime(2026, 11, 22, 15, 0, tzinfo=dt.UTC)


def test_this_month_starts_on_the_first_in_the_display_time_zone() -> None:
    filters = ViewState(range="month", tz="Asia/Seoul").filters(NOW)
    assert filters.start == dt.datetime(2026, 11, 30, 15, 0, tzinfo=dt.UTC)  # Dec 1, 00:00 KST


def test_dimension_filters_reach_the_query_filters() -> None:
    state, _ = parse({"user": ["lee"], "client": ["OpenCode"]}, default_tz="UTC", known=KNOWN)
    filters = state.filters(NOW)
    assert filters.users == ("lee",) and filters.clients == ("OpenCode",) and filters.nodes == ()


def test_the_language_is_part_of_the_link_unless_it_is_the_default() -> None:
    state, notices = parse({"lang": ["ko"]}, default_tz="UTC", known=KNOWN)
    assert notices == [] and state.lang == "ko"
    assert to_params(state, default_tz="UTC") == {"lang": ["ko"]}
    assert to_params(state, default_tz="UTC", default_lang="ko") == {}
    default, _ = parse({}, default_tz="UTC", known=KNOWN, default_lang="ko")
    assert default.lang == "ko" and to_params(default, default_tz="UTC", default_lang="ko") == {}


def test_an_unknown_language_is_ignored_with_a_notice() -> None:
    state, notices = parse({"lang": ["fr"]}, default_tz="UTC", known=KNOWN, default_lang="ko")
    assert state.lang == "ko" and len(notices) == 1 and "lang='fr'" in notices[0]
    assert (
        parse_language(["fr"]) is None and parse_language(["en", "ko"]) == "ko" and parse_language([]) is None
    )


def test_notices_are_in_the_sessions_language() -> None:
    with use_language("ko"):
        _, notices = parse({"range": ["forever"], "user": ["mallory"]}, default_tz="UTC", known=KNOWN)
    assert notices == [
        "range='forever'은(는) 24h, 7d, 30d, month, custom 중 하나가 아니어서 최근 7일을 보여 줍니다.",
        "데이터에 없는 user 'mallory'은(는) 무시했습니다.",
    ]


def test_last_7_days_draws_7_day_buckets(tmp_path: Path) -> None:
    from queries.runner import StoreReader
    from tests import known_store

    reader = StoreReader(known_store.build(tmp_path / "store"), share_results=False)
    buckets = reader.run("by_bucket", ViewState(range="7d", tz="Asia/Seoul").filters(NOW))["bucket"]
    assert len(buckets) == 7
    assert [b.day for b in buckets] == [27, 28, 29, 30, 1, 2, 3]


def test_this_month_compares_with_the_same_days_of_the_month_before() -> None:
    """Month to date against month to date: Dec 1-7 against Nov 1-7, not Nov 24-30 (the
    cards compared a week of December with the end of November)."""
    seoul = ZoneInfo("Asia/Seoul")
    now = dt.datetime(2026, 12, 7, 2, 5, tzinfo=dt.UTC)  # 11:05 in Seoul
    filters = ViewState(range="month", tz="Asia/Seoul").filters(now)
    before = filters.previous()
    assert before.start == dt.datetime(2026, 11, 1, tzinfo=seoul)
    assert before.end == dt.datetime(2026, 11, 7, 11, 15, tzinfo=seoul)
    # March 31 compares with all of February, never with days of March
    march = ViewState(range="month", tz="Asia/Seoul").filters(dt.datetime(2027, 3, 31, 5, tzinfo=dt.UTC))
    assert march.previous().start == dt.datetime(2027, 2, 1, tzinfo=seoul)
    assert march.previous().end == dt.datetime(2027, 3, 1, tzinfo=seoul)
    # other ranges: as many days right before
    week = ViewState(range="7d", tz="Asia/Seoul").filters(now)
    assert week.previous().end == week.start
