"""A key's rate limits in words (queries/key_limits.sql measures them over the week before
LiteLLM's key list was copied): its busiest minute against its limits, and the requests
LiteLLM refused it for a rate limit, by which limit."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from dashboard import format as fmt
from dashboard.strings import t
from dashboard.untrusted import Markdown

# the store's kinds of refusal (etl/transform_rules.py, RATE_LIMIT_KINDS), in the order told
KINDS = ("tpm", "rpm", "parallel")
PEAK_TEXTS = {"tpm": "limits.peak_tpm", "rpm": "limits.peak_rpm"}


def peak(value: Any, share: Any) -> str:
    """A busiest minute and its share of the limit: 182,000 (91.0 %); — without a limit."""
    if fmt.missing(share):
        return fmt.MISSING
    return f"{fmt.count(value)} ({fmt.percent(float(share))})"


def sentences(row: Mapping[Hashable, Any] | pd.Series[Any], tz: str) -> list[str]:
    """What a student reads under a key's bar about its limits: the busiest minute, and
    the refusals (how many, for which limit, the last one)."""
    out: list[str] = []
    parts = [
        t(
            PEAK_TEXTS[unit],
            value=fmt.count(row[f"peak_{unit}"]),
            share=fmt.percent(float(row[f"{unit}_share"])),
        )
        for unit in PEAK_TEXTS
        if not fmt.missing(row[f"{unit}_share"])
    ]
    if parts:
        out.append(t("limits.busiest", parts=Markdown(t("limits.and").join(parts))))
    refused = int(row["rate_limited"])
    if refused:
        kinds = [
            t(f"limits.kind.{kind}", n=int(row[f"rate_limited_{kind}"]))
            for kind in KINDS
            if int(row[f"rate_limited_{kind}"])
        ]
        out.append(
            t(
                "limits.refused",
                n=refused,
                kinds=t("limits.kinds", kinds=Markdown(", ".join(kinds))) if kinds else Markdown(""),
                when=fmt.timestamp(row["last_rate_limited_at"], tz),
            )
        )
        elsewhere = int(row["rate_limited_elsewhere"])
        if elsewhere:
            out.append(t("limits.elsewhere", n=elsewhere))
    return out
