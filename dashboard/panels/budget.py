"""A student's budget bars: each key's spend against its budget, whether it lasts until it
resets, its rate limits; then the person's own budget."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import forecasts, untrusted
from dashboard import format as fmt
from dashboard import limits as rate_limits
from dashboard.panels.status import _local
from dashboard.strings import t


def budget_bars(budgets: pd.DataFrame, limits: pd.DataFrame, tz: str) -> None:
    """Each of a student's keys: spend against its budget, what is left, whether it lasts
    until it resets, and its rate limits with its busiest minute and refusals (`limits`:
    queries/key_limits.sql); then the person's own budget, if LiteLLM has one for them."""
    st.markdown(f"**{t('panel.budget')}**")
    if budgets.empty:
        st.caption(t("budget.no_keys"))
        return
    st.html(LEVEL_BARS)
    limits_by_key = {row["api_key_hash"]: row for row in limits.to_dict("records")}
    for index, key in enumerate(budgets.to_dict("records")):
        name = key["key_alias"] or key["key_name"] or t("budget.key")
        level = (
            fmt.budget_level(key["budget_used"], key["forecast"])
            if not fmt.missing(key["max_budget"])
            else "none"
        )
        if level != "none":  # the same scale and colours as the administrators' table
            st.markdown(f":{fmt.LEVEL_COLORS[level]}-badge[{t(f'budget.level.{level}')}]")
        if key["forecast"] == "invalid":  # a budget or spend LiteLLM holds that cannot be read
            st.markdown(f"**{untrusted.markdown(name)}**")
            st.markdown(forecasts.sentence(key, tz))
        elif fmt.missing(key["max_budget"]):
            st.progress(0.0, text=t("budget.unlimited", key=name, spend=fmt.usd(key["spend"])))
        else:
            used = float(key["budget_used"] or 0.0)
            text = t(
                "budget.used",
                key=name,
                spend=fmt.usd(key["spend"]),
                budget=fmt.usd(key["max_budget"]),
                left=fmt.usd(key["budget_left"]),
                share=fmt.percent(used),
            )
            _level_bar(level, f"key{index}", min(max(used, 0.0), 1.0), text)
            st.markdown(forecasts.sentence(key, tz))
            note = forecasts.period_note(key)
            if note:
                st.markdown(note)
        details = [_budget_period(key, tz)]
        if not fmt.missing(key["budget_reset_at"]):
            details.append(
                t(
                    "budget.resets",
                    when=_local(key["budget_reset_at"], tz),
                    every=fmt.period(key["budget_duration"]),
                )
            )
        named = [
            f"{t(label)} {int(key[column]):,}"
            for label, column in (("col.tpm", "tpm_limit"), ("col.rpm", "rpm_limit"))
            if not fmt.missing(key[column])
        ]
        details.append(t("budget.limits", limits=" · ".join(named)) if named else t("budget.no_limits"))
        st.caption(" · ".join(details))
        measured = limits_by_key.get(key["api_key_hash"])
        for sentence in rate_limits.sentences(measured, tz) if measured is not None else ():
            st.markdown(sentence)
    first = budgets.iloc[0]
    if first["user_forecast"] == "invalid":
        st.markdown(forecasts.sentence(first, tz, person=True))
    elif not fmt.missing(first["user_max_budget"]):
        spent, budget = float(first["user_spend"] or 0), float(first["user_max_budget"])
        used = spent / budget if budget else 1.0
        text = t("budget.user", spend=fmt.usd(spent), budget=fmt.usd(budget))
        _level_bar(fmt.budget_level(used, first["user_forecast"]), "user", min(used, 1.0), text)
        st.markdown(forecasts.sentence(first, tz, person=True))


# A budget bar's fill in its level's colour: Streamlit draws every progress bar in the
# theme's primary colour, which made a key at 20 % as alarming as one at 90 %. Static CSS,
# no data in it; each bar sits in a container whose key names its level.
LEVEL_BARS = (
    "<style>"
    + "".join(
        f"[class*='st-key-budget-{level}-'] [data-testid='stProgressBarTrack'] > div "
        f"{{ background: {colour}; }}"
        for level, colour in fmt.LEVEL_HEX.items()
    )
    + "</style>"
)


def _budget_period(key: Mapping[Any, Any], tz: str) -> str:
    """Which spend the budget's figures count: LiteLLM's own, since its period began (or
    since the key was made), not the range the cards below show."""
    start = key["budget_period_start"]
    if fmt.missing(start):
        return t("budget.period_all")
    return t("budget.period_since", start=_local(start, tz))


def _level_bar(level: str, name: str, value: float, text: str) -> None:
    with st.container(key=f"budget-{level}-{name}"):
        st.progress(value, text=text)
