"""The price book: what each served model would cost at a public API's prices, for the
dashboard's "at API prices" figures. Read from the TOML file `price_book` names
(deploy/prices.example.toml documents it); without one, the figures are not shown.

Prices are USD per million tokens. An entry holds from its `from` day (inclusive) until
its `until` day (exclusive), both UTC days as the store's days are; without them, always.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from settings.errors import ConfigError
from settings.toml_file import read_toml

REQUIRED = ("model", "reference", "input", "cached_input", "output", "taken")
KNOWN = {*REQUIRED, "from", "until"}
# USD per million tokens above which a price is a typo (the dearest public API asks ~$600):
# an infinite or 1e308 one would make every total at API prices infinite
MAX_USD = 10_000


@dataclass(frozen=True)
class Price:
    """One model's API prices over a span of UTC days (`valid_from`, `valid_until`: the
    file's `from` and `until`; None is open)."""

    model: str  # the model group as the store holds it (exact match)
    reference: str  # the API model the prices are those of, e.g. an OpenRouter model id
    input: float  # USD per million uncached prompt tokens
    cached_input: float  # USD per million cached prompt tokens
    output: float  # USD per million completion tokens (reasoning included)
    taken: dt.date  # when the prices were read
    valid_from: dt.date | None = None
    valid_until: dt.date | None = None


def load_price_book(path: Path) -> tuple[Price, ...]:
    """The entries of the price book at `path`, checked; ConfigError names what is wrong."""
    return parse(read_toml(path, f"price book {path}"), path)


def parse(data: dict[str, Any], path: Path) -> tuple[Price, ...]:
    unknown = sorted(set(data) - {"price"})
    if unknown:
        raise ConfigError(f"price book {path}: unknown setting {unknown[0]} (entries are [[price]] tables)")
    entries = data.get("price", [])
    if not isinstance(entries, list):
        raise ConfigError(f"price book {path}: price must be an array of tables: [[price]]")
    prices = tuple(_entry(path, i, entry) for i, entry in enumerate(entries))
    _reject_overlaps(path, prices)
    return prices


def _entry(path: Path, i: int, entry: Any) -> Price:
    where = f"price book {path}, price[{i}]"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table")
    model = entry.get("model")
    if isinstance(model, str) and model:
        where += f" ({model})"
    unknown = sorted(set(entry) - KNOWN)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]} (known: {', '.join(sorted(KNOWN))})")
    missing = [key for key in REQUIRED if key not in entry]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)}")
    for key in ("model", "reference"):
        if not isinstance(entry[key], str) or not entry[key].strip():
            raise ConfigError(f"{where}: {key} must be a non-empty string")
    price = Price(
        model=entry["model"],
        reference=entry["reference"].strip(),
        input=_usd(where, "input", entry["input"]),
        cached_input=_usd(where, "cached_input", entry["cached_input"]),
        output=_usd(where, "output", entry["output"]),
        taken=_day(where, "taken", entry["taken"]),
        valid_from=_day(where, "from", entry["from"]) if "from" in entry else None,
        valid_until=_day(where, "until", entry["until"]) if "until" in entry else None,
    )
    start, until = price.valid_from, price.valid_until
    if start is not None and until is not None and start >= until:
        raise ConfigError(f"{where}: from ({price.valid_from}) must be before until ({price.valid_until})")
    return price


def _usd(where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= MAX_USD:
        raise ConfigError(
            f"{where}: {key} must be USD per million tokens, from 0 to {MAX_USD:,}, not {value!r}"
        )
    return float(value)


def _day(where: str, key: str, value: Any) -> dt.date:
    """A TOML date (2026-11-20) or the same as a string; not a date with a time of day:
    prices change between UTC days, as the store's rollups are per UTC day."""
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            pass
    elif isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    raise ConfigError(f"{where}: {key} must be a date such as 2026-11-20 (a UTC day), not {value!r}")


def _reject_overlaps(path: Path, prices: tuple[Price, ...]) -> None:
    """At most one price per model and day: else a request would be counted twice."""
    by_model: dict[str, list[Price]] = {}
    for price in prices:
        by_model.setdefault(price.model, []).append(price)
    for model, entries in by_model.items():
        ordered = sorted(entries, key=lambda p: p.valid_from or dt.date.min)
        for earlier, later in itertools.pairwise(ordered):
            ends, begins = earlier.valid_until, later.valid_from
            if ends is None or begins is None or begins < ends:
                raise ConfigError(
                    f"price book {path}: two prices of {model} hold on the same days "
                    f"({_span(earlier)} and {_span(later)}): give them from/until dates that do not overlap"
                )


def _span(price: Price) -> str:
    return f"from {price.valid_from or 'the start'} until {price.valid_until or 'the end'}"


def boundaries(prices: tuple[Price, ...]) -> frozenset[dt.date]:
    """The days on which some price begins or ends."""
    return frozenset(d for p in prices for d in (p.valid_from, p.valid_until) if d is not None)
