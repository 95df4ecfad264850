"""What the range's use would have cost at API prices (the price book; queries/pages.py,
api_cost): a card beside LiteLLM's spend with the difference, the models left unpriced,
and the cost per model, user, node and client. Absent without a price book: never a
made-up number, and a model without a price is "not priced", never $0."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import format as fmt
from dashboard import tables
from dashboard.strings import t

# the tables' first column per view, and whether a student sees it (their own user and
# nodes say nothing a model or client table does not)
VIEWS = (("by_model", "model"), ("by_client", "client"), ("by_user", "user"), ("by_node", "node"))
STUDENT_VIEWS = ("by_model", "by_client")


def panel(costs: Mapping[str, pd.DataFrame], tz: str, *, student: bool = False) -> None:
    """The panel, when there is a price book (`costs` not empty)."""
    if not costs:
        return
    totals = costs["totals"].iloc[0]
    with st.container(border=True):
        st.markdown(f"**{t('api.title')}**", help=t("api.help"))
        at_api, spend, ratio = st.columns(3)
        at_api.metric(t("api.card"), fmt.usd(totals["api_cost_usd"]), border=True)
        spend.metric(t("api.same_spend"), fmt.usd(totals["priced_spend_usd"]), border=True)
        # a ratio, not "API prices − spend": a negative difference read as a loss
        ratio.metric(t("api.ratio"), _ratio(totals["api_cost_usd"], totals["priced_spend_usd"]), border=True)
        taken = totals["prices_taken"]
        st.caption(
            t("api.caption", taken=fmt.day(pd.Timestamp(taken).date()) if not fmt.missing(taken) else "—")
        )
        unpriced = costs["unpriced"]
        if not unpriced.empty:
            models = ", ".join(
                f"{name} ({fmt.count(n)})"
                for name, n in zip(unpriced["model"], unpriced["requests"], strict=True)
            )
            st.warning(t("api.unpriced", n=int(totals["unpriced_requests"]), models=models))
        views = [(key, name) for key, name in VIEWS if not student or key in STUDENT_VIEWS]
        for tab, (key, name) in zip(st.tabs([t(f"api.by.{key}") for key, _ in views]), views, strict=True):
            with tab:
                _table(costs[key], name)


def _ratio(at_api: object, spend: object) -> str:
    """0.35x: the cost at API prices over LiteLLM's spend of the same requests (— without
    a spend to compare with)."""
    if fmt.missing(at_api) or fmt.missing(spend) or not float(spend):  # type: ignore[arg-type]
        return fmt.MISSING
    return t("api.times", value=f"{float(at_api) / float(spend):.2f}")  # type: ignore[arg-type]


def _usd(value: Any) -> str:
    return fmt.usd(value)


def _table(frame: pd.DataFrame, name: str) -> None:
    columns = {
        name: st.column_config.TextColumn(t(f"api.col.{name}")),
        "reference": st.column_config.TextColumn(t("api.col.reference")),
        "requests": st.column_config.NumberColumn(t("api.col.requests")),
        "spend_usd": st.column_config.NumberColumn(t("api.col.spend")),
        "api_cost_usd": st.column_config.NumberColumn(t("api.col.api_cost")),
        "unpriced_requests": st.column_config.NumberColumn(t("api.col.unpriced")),
    }
    columns = {column: config for column, config in columns.items() if column in frame}
    shown = tables.with_other(frame, name)[list(columns)]
    styler = tables.styled(
        shown, {"requests": fmt.count, "unpriced_requests": fmt.count, "spend_usd": fmt.usd}
    ).format(_usd, subset=["api_cost_usd"], na_rep=t("api.not_priced"))
    tables.show(styler, columns)
