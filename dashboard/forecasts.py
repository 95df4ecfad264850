"""A budget's forecast in words. queries/budgets.sql decides it (setup/views.sql:
budget_forecast, from the pace of the last 7 days); this only says it: one sentence for a
student's own key or budget, a short status for the administrators' table."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from dashboard import format as fmt
from dashboard.strings import plain, t

FORECASTS = ("runs_out", "lasts", "spent", "reset_due", "idle", "no_budget", "invalid")
NAMED_UNREADABLE = 10  # the Budgets page names this many keys whose settings cannot be read


def sentence(row: Mapping[Hashable, Any] | pd.Series[Any], tz: str, *, person: bool = False) -> str:
    """What happens to a budget at its present pace, as a sentence: a key's, or (`person`)
    its owner's own budget across keys, from the same row of queries/budgets.sql."""
    prefix = "user_" if person else ""
    forecast = row[f"{prefix}forecast"]
    reset_at, runs_out_at = row[f"{prefix}budget_reset_at"], row[f"{prefix}runs_out_at"]
    per_day = row[f"{prefix}burn_per_day"]
    values = {
        "reset": fmt.timestamp(reset_at, tz),
        "when": fmt.timestamp(runs_out_at, tz),
        "per_day": fmt.MISSING if fmt.missing(per_day) else fmt.usd(per_day),
    }
    if forecast not in FORECASTS:
        forecast = "no_budget"
    if forecast == "invalid":
        return t(
            "forecast.invalid_person" if person else "forecast.invalid",
            setting=row[f"{prefix}budget_setting"],
        )
    if forecast in ("runs_out", "spent", "lasts") and values["reset"] is None:
        return t(f"forecast.{forecast}_no_reset", **values)
    if forecast == "runs_out":
        ahead = pd.Timestamp(reset_at) - pd.Timestamp(runs_out_at)
        values["ahead"] = fmt.span(ahead.to_pytimedelta())
    return t(f"forecast.{forecast}", **values)


def status(forecast: Any) -> str:
    """The forecast in a table cell: 'runs out before the reset', 'lasts until the reset'..."""
    return t(f"forecast.status.{forecast}") if forecast in FORECASTS else fmt.MISSING


def levels(budgets: pd.DataFrame) -> list[fmt.BudgetLevel]:
    """Each key's budget status (format.budget_level) from its row of queries/budgets.sql."""
    return [
        fmt.budget_level(used, forecast)
        for used, forecast in zip(budgets["budget_used"], budgets["forecast"], strict=True)
    ]


def period_note(row: Mapping[Hashable, Any] | pd.Series[Any]) -> str | None:
    """A sentence for a key whose budget period LiteLLM holds cannot be read, else None."""
    if row["budget_problem"] != "period":
        return None
    return t("forecast.period_unread", setting=row["budget_setting"])


def unreadable(budgets: pd.DataFrame) -> str | None:
    """The keys whose budget settings cannot be read, named with the value (the first
    NAMED_UNREADABLE, then how many more), for the Budgets page; None when there are none."""
    bad = budgets[budgets["budget_problem"].notna()]
    if bad.empty:
        return None
    named = [
        f"{alias or fmt.MISSING} ({plain(f'forecast.problem.{problem}', setting=setting)})"
        for alias, problem, setting in zip(
            bad["key_alias"][:NAMED_UNREADABLE],
            bad["budget_problem"][:NAMED_UNREADABLE],
            bad["budget_setting"][:NAMED_UNREADABLE],
            strict=True,
        )
    ]
    if len(bad) > NAMED_UNREADABLE:
        named.append(plain("budgets.and_more", count=f"{len(bad) - NAMED_UNREADABLE:,}"))
    return t("budgets.unreadable", keys=", ".join(named))
