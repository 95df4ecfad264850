"""The page's whole state as URL query parameters, so that a link reproduces the view.

    ?range=7d&tz=Asia/Seoul&user=kim&user=lee&node=blackwell&highlight=kim&by=tokens&lang=ko

`parse` never fails: a value it cannot use is dropped and named in a notice (in the
session's language).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dashboard.strings import LANGUAGES, Language, t
from queries.filters import Filters

RangeKey = Literal["24h", "7d", "30d", "month", "custom"]
RANGES: tuple[RangeKey, ...] = ("24h", "7d", "30d", "month", "custom")
SPANS = {"24h": dt.timedelta(hours=24), "7d": dt.timedelta(days=7), "30d": dt.timedelta(days=30)}
UserMeasure = Literal["spend", "tokens", "requests"]
USER_MEASURES: tuple[UserMeasure, ...] = ("spend", "tokens", "requests")
DIMENSIONS = {"user": "users", "model": "models", "node": "nodes", "client": "clients"}
MAX_CUSTOM_DAYS = 366
# The days a custom range may name: a day near the ends of Python's calendar (9999-12-31,
# 0001-01-01) overflows when it becomes an instant or when the date picker widens it by
# ten years either way. LiteLLM's logs begin long after the first and end long before the last.
FIRST_DAY = dt.date(1970, 1, 1)
LAST_DAY = dt.date(2999, 12, 31)
SLOT = dt.timedelta(minutes=15)


@dataclass(frozen=True)
class ViewState:
    range: RangeKey = "7d"
    start_day: dt.date | None = None  # custom range: local days, both included
    end_day: dt.date | None = None
    tz: str = "UTC"
    users: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()
    clients: tuple[str, ...] = ()
    highlight: str | None = None
    by: UserMeasure = "spend"
    lang: Language = "en"  # the page's language (dashboard/language.py keeps it per session)

    def filters(self, now: dt.datetime) -> Filters:
        """The query filters for this view at `now` (UTC instants).

        Rolling ranges end at the next 15-minute boundary, so that the same view asked
        twice within those minutes is the same query (and a cache hit).
        """
        zone = ZoneInfo(self.tz)
        if self.range == "custom" and self.start_day and self.end_day:
            start = dt.datetime.combine(self.start_day, dt.time(), zone).astimezone(dt.UTC)
            end = dt.datetime.combine(self.end_day + dt.timedelta(days=1), dt.time(), zone).astimezone(dt.UTC)
        else:
            end = _ceil_slot(now)
            local = now.astimezone(zone)
            if self.range == "month":
                start = dt.datetime(local.year, local.month, 1, tzinfo=zone).astimezone(dt.UTC)
            elif self.range in ("7d", "30d"):
                # whole local days, today the last of them (so far): "Last 7 days" draws 7
                # day bars, not a sliver of an eighth day at its start
                first = local.date() - (SPANS[self.range] - dt.timedelta(days=1))
                start = dt.datetime.combine(first, dt.time(), zone).astimezone(dt.UTC)
            else:
                # whole local hours, this hour the last of them (so far): 24 hour bars, not
                # a sliver of a 25th at the start (an hour is local: India's starts at :30 UTC)
                hour = local.replace(minute=0, second=0, microsecond=0).astimezone(dt.UTC)
                start = hour - (SPANS["24h"] - dt.timedelta(hours=1))
        return Filters(
            start=start,
            end=end,
            tz=self.tz,
            users=self.users,
            models=self.models,
            nodes=self.nodes,
            clients=self.clients,
            month_to_date=self.range == "month",
        )


def parse(
    params: Mapping[str, list[str]],
    *,
    default_tz: str,
    known: Mapping[str, Iterable[str]],
    zones: Iterable[str] | None = None,
    default_lang: Language = "en",
) -> tuple[ViewState, list[str]]:
    """The view a URL asks for, and a notice for every value that was ignored.

    `known` lists the values each dimension ("user", "model", "node", "client") has in
    the store; anything else is dropped rather than shown as an empty page. `zones` are
    the time zones the query layer can bucket by (default: any Python knows).
    """
    allowed_zones = set(zones) if zones is not None else None
    notices: list[str] = []
    state = ViewState(tz=default_tz, lang=default_lang)

    def first(key: str) -> str | None:
        values = params.get(key) or []
        return values[-1] if values else None

    if (value := first("range")) is not None:
        if value in RANGES:
            state = replace(state, range=RANGES[RANGES.index(value)])
        else:
            notices.append(t("notice.range", value=repr(value), choices=", ".join(RANGES)))
    if state.range == "custom":
        start, end = _day(first("from")), _day(first("to"))
        if (
            start is None
            or end is None
            or end < start
            or (end - start).days >= MAX_CUSTOM_DAYS
            or start < FIRST_DAY
            or end > LAST_DAY
        ):
            notices.append(t("notice.custom", days=MAX_CUSTOM_DAYS))
            state = replace(state, range="7d")
        else:
            state = replace(state, start_day=start, end_day=end)
    if (value := first("tz")) is not None:
        if (allowed_zones is None or value in allowed_zones) and _valid_zone(value):
            state = replace(state, tz=value)
        else:
            notices.append(t("notice.tz", value=repr(value), default=default_tz))
    chosen: dict[str, tuple[str, ...]] = {}
    for key, field in DIMENSIONS.items():
        wanted = list(dict.fromkeys(params.get(key) or []))
        allowed = set(known.get(key, ()))
        unknown = [v for v in wanted if v not in allowed]
        if unknown:
            notices.append(t("notice.unknown", dimension=key, values=", ".join(repr(u) for u in unknown)))
        chosen[field] = tuple(v for v in wanted if v in allowed)
    state = replace(
        state,
        users=chosen["users"],
        models=chosen["models"],
        nodes=chosen["nodes"],
        clients=chosen["clients"],
    )
    if (value := first("highlight")) is not None:
        if value in set(known.get("user", ())):
            state = replace(state, highlight=value)
        else:
            notices.append(t("notice.highlight", value=repr(value)))
    if (value := first("by")) is not None:
        if value in USER_MEASURES:
            state = replace(state, by=USER_MEASURES[USER_MEASURES.index(value)])
        else:
            notices.append(t("notice.by", value=repr(value), choices=", ".join(USER_MEASURES)))
    if (value := first("lang")) is not None:
        if (lang := parse_language([value])) is not None:
            state = replace(state, lang=lang)
        else:
            notices.append(t("notice.lang", value=repr(value), choices=", ".join(LANGUAGES)))
    return state, notices


def parse_language(values: Iterable[str] | None) -> Language | None:
    """The language a link's lang= names (its last value), or None for none or another."""
    last = list(values or [])[-1:]
    return next((lang for lang in LANGUAGES if last == [lang]), None)


def to_params(state: ViewState, *, default_tz: str, default_lang: Language = "en") -> dict[str, list[str]]:
    """The query parameters of `state`, defaults left out so links stay short."""
    out: dict[str, list[str]] = {}
    if state.range != "7d":
        out["range"] = [state.range]
    if state.range == "custom" and state.start_day and state.end_day:
        out["from"], out["to"] = [state.start_day.isoformat()], [state.end_day.isoformat()]
    if state.tz != default_tz:
        out["tz"] = [state.tz]
    for key, field in DIMENSIONS.items():
        values = getattr(state, field)
        if values:
            out[key] = list(values)
    if state.highlight:
        out["highlight"] = [state.highlight]
    if state.by != "spend":
        out["by"] = [state.by]
    if state.lang != default_lang:
        out["lang"] = [state.lang]
    return out


def _day(text: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(text) if text else None
    except ValueError:
        return None


def _valid_zone(name: str) -> bool:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: a name too long for a path
        return False
    return True


def _ceil_slot(moment: dt.datetime) -> dt.datetime:
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    slots = -((epoch - moment) // SLOT)  # ceiling division
    return epoch + slots * SLOT
