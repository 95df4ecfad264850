"""What a query looks at: the time range, the display time zone and bucket, and the
dimensions it is narrowed to. The same filters apply to every query, in SQL."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from settings.config import DEFAULT_TIMEZONE

Bucket = Literal["hour", "day"]
BUCKETS: tuple[Bucket, ...] = ("hour", "day")
STATUSES = ("success", "failure")
HOURLY_UP_TO = dt.timedelta(days=2)  # longer ranges are shown by day


class InvalidFilter(ValueError):
    """A filter that cannot be applied; the message says which and why."""


@dataclass(frozen=True)
class Filters:
    """[start, end) in UTC instants; empty dimension tuples mean "all"."""

    start: dt.datetime | None = None
    end: dt.datetime | None = None
    tz: str = DEFAULT_TIMEZONE
    bucket: Bucket | None = None  # None: hour up to 2 days, day beyond
    users: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    nodes: tuple[str, ...] = ()
    clients: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    # Set for a student's session: every query then sees only these api_key hashes.
    only_keys: tuple[str, ...] | None = field(default=None, repr=False)
    # "This month": the period before is the same days of the month before (month to date
    # against month to date), not as many days right before it
    month_to_date: bool = False

    def __post_init__(self) -> None:
        for name in ("users", "models", "nodes", "clients", "statuses", "only_keys"):
            value = getattr(self, name)
            if value is None and name == "only_keys":
                continue
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise InvalidFilter(f"{name} must be a tuple of strings, not {value!r}")
            object.__setattr__(self, name, tuple(value))
        for name in ("start", "end"):
            value = getattr(self, name)
            if value is not None and value.tzinfo is None:
                raise InvalidFilter(f"{name} must be time-zone aware (UTC instants), got {value}")
        if self.start is not None and self.end is not None and self.start >= self.end:
            raise InvalidFilter(f"the range is empty or reversed: {self.start} to {self.end}")
        try:
            ZoneInfo(self.tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise InvalidFilter(f"unknown time zone {self.tz!r}") from None
        if self.bucket is not None and self.bucket not in BUCKETS:
            raise InvalidFilter(f"bucket must be one of {', '.join(BUCKETS)}, not {self.bucket!r}")
        unknown = set(self.statuses) - set(STATUSES)
        if unknown:
            raise InvalidFilter(f"status must be success or failure, not {', '.join(sorted(unknown))}")

    @classmethod
    def last(cls, span: dt.timedelta, *, now: dt.datetime | None = None, **kwargs: Any) -> Filters:
        """The `span` up to `now` (default: this moment)."""
        end = now or dt.datetime.now(dt.UTC)
        return cls(start=end - span, end=end, **kwargs)

    @property
    def bucket_size(self) -> Bucket:
        if self.bucket is not None:
            return self.bucket
        if self.start is not None and self.end is not None and self.end - self.start <= HOURLY_UP_TO:
            return "hour"
        return "day"

    def previous(self) -> Filters:
        """The period of equal length right before this one (for the cards' deltas); for
        `month_to_date`, the month before from its first day, as long as this one so far
        (at most the whole month: March 31 compares with all of February)."""
        if self.start is None or self.end is None:
            raise InvalidFilter("an open-ended range has no previous period")
        length = self.end - self.start
        if self.month_to_date:
            zone = ZoneInfo(self.tz)
            first = self.start.astimezone(zone)
            before = (first.replace(day=1) - dt.timedelta(days=1)).replace(day=1)
            start = dt.datetime(before.year, before.month, 1, tzinfo=zone).astimezone(dt.UTC)
            end = min(start + length, self.start)
            return replace(self, start=start, end=end, bucket=self.bucket_size)
        return replace(self, start=self.start - length, end=self.start, bucket=self.bucket_size)

    def variable(self) -> dict[str, Any]:
        """The struct the `scoped` and `buckets` views read as `getvariable('filters')`."""

        def listed(values: tuple[str, ...] | None) -> list[str] | None:
            return list(values) if values else None

        return {
            "range_start": self.start,
            "range_end": self.end,
            "tz": self.tz,
            "bucket": self.bucket_size,
            "users": listed(self.users),
            "models": listed(self.models),
            "nodes": listed(self.nodes),
            "clients": listed(self.clients),
            "statuses": listed(self.statuses),
            # an empty list, not NULL, for a student without keys: they see nothing
            "only_keys": None if self.only_keys is None else list(self.only_keys),
        }
