"""The Overview's first screen: the professor's four questions answered in sentences, each
with a link to where the detail is (issue 28). Who used the most and through which tool;
which node struggles (dashboard/verdicts.py); what the range would have cost at API
prices, as a cost and a ratio; which budgets need attention, and who was refused.

The sentences are built by pure functions (tests read them without a page); `render` only
lays them out. Every list is short (SHOWN items, then "and N more"), so the block fits
the first screen whatever the lab's size, and says so in words where there is nothing to
say: an empty range, no price book, no budgets, too few requests to judge a node.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import streamlit as st

from dashboard import forecasts, verdicts
from dashboard import format as fmt
from dashboard.strings import t
from dashboard.untrusted import Markdown, markdown
from queries.filters import Filters

SHOWN = 3  # items named per question before "and N more"


@dataclass(frozen=True)
class Glance:
    """The block's sentences by question (each a list of Markdown lines)."""

    users: list[str]
    nodes: list[str]
    api_cost: list[str]
    budgets: list[str]
    nodes_window: str = ""  # the days the verdicts are judged over


def build(
    data: Mapping[str, pd.DataFrame],
    glance: Mapping[str, pd.DataFrame],
    tz: str,
    window: Filters | None = None,
) -> Glance:
    """`data`: the Overview's result sets (queries/pages.py, overview); `glance`: pages.glance,
    and the API-price totals under "api_cost_totals" when there is a price book; `window`:
    pages.verdict_window, the days the nodes are judged over."""
    return Glance(
        users=users(data["by_user"], data["user_client_matrix"]),
        nodes=nodes(verdicts.judge(glance["nodes"], glance["nodes_before"])),
        api_cost=api_cost(glance.get("api_cost_totals")),
        budgets=budgets(glance["budgets"], glance["refusals"], tz),
        nodes_window=window_text(window) if window is not None else "",
    )


def window_text(window: Filters) -> str:
    """ "Dec 2 – Dec 8, against the 7 days before": the verdicts' days, in the page's zone."""
    assert window.start is not None and window.end is not None
    zone = ZoneInfo(window.tz)
    first = window.start.astimezone(zone).date()
    last = (window.end - dt.timedelta(microseconds=1)).astimezone(zone).date()
    this_year = dt.datetime.now(zone).year
    days = (last - first).days + 1
    return t(
        "glance.nodes.window",
        start=fmt.day(first, this_year=this_year),
        end=fmt.day(last, this_year=this_year),
        days=days,
    )


# --- who used the most, and with what -----------------------------------------------------------


def users(by_user: pd.DataFrame, matrix: pd.DataFrame, shown: int = SHOWN) -> list[str]:
    """The top users of the range with the client each mostly used and its share: by spend
    where LiteLLM counts any, else by tokens (a lab whose models cost nothing)."""
    people = _named(by_user)
    people = people[people["requests"] > 0]
    if people.empty:
        return [t("glance.users.none")]
    by_spend = float(people["spend_usd"].sum()) > 0
    measure, share = ("spend_usd", "spend_share") if by_spend else ("total_tokens", "tokens_share")
    people = people.sort_values([measure, "requests"], ascending=False)
    lines = []
    for row in people.head(shown).to_dict("records"):
        amount = fmt.usd(row[measure]) if by_spend else t("glance.tokens", tokens=fmt.count(row[measure]))
        client, client_share = _main_client(matrix, row["user"], measure)
        values = {"user": row["user"], "amount": amount, "share": fmt.percent(row[share] or 0.0, 0)}
        if client is None:
            lines.append(t("glance.users.line_no_client", **values))
        else:
            lines.append(
                t("glance.users.line", **values, client=client, client_share=fmt.percent(client_share, 0))
            )
    return lines + _more(len(people) - shown)


def _named(frame: pd.DataFrame) -> pd.DataFrame:
    """Without a row that stands for the names folded into "other" (it is nobody)."""
    return frame[frame["folded"].fillna(0) == 0] if "folded" in frame else frame


def _main_client(matrix: pd.DataFrame, user: str, measure: str) -> tuple[str | None, float]:
    """The client a user used most, and its share of all they used (the clients folded
    into "other" count in the whole, never as the main one)."""
    theirs = matrix[matrix["user"] == user]
    total = float(theirs[measure].sum())
    named = theirs[theirs["client"].notna()]
    if "clients_folded" in named:
        named = named[named["clients_folded"].isna()]
    if named.empty or total <= 0:
        return None, 0.0
    top = named.sort_values([measure, "requests"], ascending=False).iloc[0]
    return str(top["client"]), float(top[measure]) / total


# --- which node struggles ------------------------------------------------------------------------


def nodes(judged: list[verdicts.Verdict], shown: int = SHOWN + 1) -> list[str]:
    """A line per node that is down, failing or slow (the worst first, `shown` of them),
    then the good ones in one line, then those with too few requests to judge."""
    if not judged:
        return [t("glance.nodes.none")]
    problems = [v for v in judged if v.status in ("down", "failing", "slow")]
    lines = [_problem(v) for v in problems[:shown]] + _more(len(problems) - shown)
    good = [v.node for v in judged if v.status == "good"]
    if good:
        key = "glance.nodes.all_good" if not problems else "glance.nodes.good"
        lines.append(t(key, nodes=_names(good)))
    few = [v.node for v in judged if v.status == "too_few"]
    if few:
        lines.append(t("glance.nodes.too_few", nodes=_names(few), least=verdicts.MIN_REQUESTS))
    return lines


def _problem(v: verdicts.Verdict) -> str:
    values = dict(v.reason.values)
    kind = v.reason.kind
    if kind == "down":
        return t("glance.nodes.down", node=v.node, before=fmt.count(values["before"]))
    if kind == "failures":
        return t(
            "glance.nodes.failing",
            node=v.node,
            rate=fmt.percent(values["rate"], 0),
            failures=fmt.count(values["failures"]),
            requests=fmt.count(values["requests"]),
        )
    peers = kind.endswith("_peers")
    if kind.startswith("ttft"):
        return t(
            "glance.nodes.ttft_peers" if peers else "glance.nodes.ttft_before",
            node=v.node,
            model=values["model"],
            value=fmt.duration_ms(values["ttft_ms"]),
            other=fmt.duration_ms(values["other_ms"]),
            times=f"{values['times']:.1f}",
        )
    return t(
        "glance.nodes.speed_peers" if peers else "glance.nodes.speed_before",
        node=v.node,
        model=values["model"],
        value=fmt.rate(values["tps"]),
        other=fmt.rate(values["other_tps"]),
        times=f"{values['times']:.1f}",
    )


def _names(names: list[str], shown: int = 6) -> Markdown:
    named = ", ".join(f"**{markdown(n)}**" for n in names[:shown])
    rest = len(names) - shown
    return Markdown(named + (" " + t("glance.more", count=fmt.count(rest)) if rest > 0 else ""))


# --- what it would cost at API prices ---------------------------------------------------------------


def api_cost(totals: pd.DataFrame | None) -> list[str]:
    """The range at the price book's API prices, beside what LiteLLM counted: a cost and a
    ratio, never a negative saving."""
    if totals is None or totals.empty:
        return [t("glance.api.no_prices")]
    row = totals.iloc[0]
    at_api, spend = float(row["api_cost_usd"] or 0.0), float(row["priced_spend_usd"] or 0.0)
    if int(row["priced_requests"]) == 0:
        return [t("glance.api.nothing_priced")]
    if spend > 0:
        line = t("glance.api.line", api=fmt.usd(at_api), spend=fmt.usd(spend), ratio=f"{at_api / spend:.2f}")
    else:
        line = t("glance.api.line_no_spend", api=fmt.usd(at_api))
    lines = [line]
    if int(row["unpriced_requests"]):
        lines.append(t("glance.api.unpriced", requests=fmt.count(row["unpriced_requests"])))
    return lines


# --- budgets that need attention, and refusals --------------------------------------------------


def budgets(table: pd.DataFrame, refusals: pd.DataFrame, tz: str, shown: int = SHOWN) -> list[str]:
    """Keys over budget, then those at risk (forecast to run out before their reset, or 80 %
    used), each named with its numbers in one line per kind; then the keys refused for
    budget or rate limit in the range."""
    lines: list[str] = []
    if table.empty:
        lines.append(t("glance.budgets.no_keys"))
    else:
        levels = forecasts.levels(table)
        over = table[[level == "over" for level in levels]]
        risk = table[[level == "near" for level in levels]]
        if not over.empty:
            named = [
                t("glance.budgets.over_key", **_key(row), spend=fmt.usd(row["spend"]), budget=fmt.usd(budget))
                for row in over.head(shown).to_dict("records")
                for budget in [row["max_budget"]]
            ]
            lines.append(t("glance.budgets.over", keys=_joined(named, len(over) - shown)))
        if not risk.empty:
            named = [_at_risk(row, tz) for row in risk.head(shown).to_dict("records")]
            lines.append(t("glance.budgets.at_risk", keys=_joined(named, len(risk) - shown)))
        if over.empty and risk.empty:
            with_budget = sum(level != "none" for level in levels)
            fine = t("glance.budgets.fine", keys=fmt.count(with_budget))
            lines.append(fine if with_budget else t("glance.budgets.none"))
    lines += _refused(refusals, "budget_refused", "glance.refused.budget", shown)
    lines += _refused(refusals, "rate_limited", "glance.refused.rate", shown)
    return lines


def _joined(named: list[str], rest: int) -> Markdown:
    more = [t("glance.more", count=fmt.count(rest))] if rest > 0 else []
    return Markdown("; ".join([*named, *more]))


def _key(row: Mapping[Any, Any]) -> dict[str, Any]:
    """The key as a sentence names it: its alias in bold, and its owner if it has one."""
    name = row["key_alias"] or row["key_name"] or t("budget.key")
    owner = row["user_id"]
    if fmt.missing(owner) or not owner or owner == name:
        return {"key": Markdown(f"**{markdown(name)}**")}
    return {"key": Markdown(f"**{markdown(name)}** ({markdown(owner)})")}


def _at_risk(row: Mapping[Any, Any], tz: str) -> str:
    if row["forecast"] == "runs_out":
        when = _local_day(row["runs_out_at"], tz)
        if fmt.missing(row["budget_reset_at"]):
            return t("glance.budgets.runs_out_no_reset", **_key(row), when=when)
        reset = _local_day(row["budget_reset_at"], tz)
        return t("glance.budgets.runs_out", **_key(row), when=when, reset=reset)
    return t("glance.budgets.near", **_key(row), share=fmt.percent(row["budget_used"], 0))


def _local_day(value: Any, tz: str) -> str:
    return fmt.day(pd.Timestamp(value).tz_convert(tz).date())


def _refused(refusals: pd.DataFrame, column: str, key: str, shown: int) -> list[str]:
    refused = refusals[refusals[column] > 0].sort_values(column, ascending=False)
    if refused.empty:
        return []
    named: list[str] = [
        Markdown(f"**{markdown(alias or fmt.MISSING)}** ({fmt.count(n)})")
        for alias, n in zip(refused["key_alias"][:shown], refused[column][:shown], strict=True)
    ]
    return [t(key, keys=_joined(named, len(refused) - shown))]


def _more(rest: int) -> list[str]:
    return [t("glance.more", count=fmt.count(rest))] if rest > 0 else []


# --- the block -------------------------------------------------------------------------------------


# The block's text a little smaller and its lists tighter than the page's: it must fit the
# first screen at 1280x800 beside the sidebar (tests/test_glance_browser.py measures it).
STYLE = """<style>
.st-key-glance [data-testid='stMarkdownContainer'] p,
.st-key-glance [data-testid='stMarkdownContainer'] li { font-size: 0.875rem; line-height: 1.4; }
.st-key-glance [data-testid='stMarkdownContainer'] li { margin: 0 0 0.15rem 0; }
.st-key-glance [data-testid='stMarkdownContainer'] ul { margin: 0; padding-left: 1.1rem; }
</style>"""


def render(glance: Glance, links: Mapping[str, Any]) -> None:
    """The four answers in two rows of two, each under its question with a link to its
    page (`links`: the StreamlitPage objects by name; a question without a page has none)."""
    with st.container(border=True, key="glance", gap="small"):
        st.html(STYLE)
        answers = (
            ("users", glance.users, None),
            ("nodes", glance.nodes, links.get("nodes")),
            ("api", glance.api_cost, None),
            ("budgets", glance.budgets, links.get("budgets")),
        )
        for row in (answers[:2], answers[2:]):
            for column, (name, lines, page) in zip(st.columns(2, gap="medium"), row, strict=True):
                with column, st.container(key=f"glance-{name}", gap="small"):
                    title = t(f"glance.{name}.title")
                    if page is None:
                        st.markdown(f"**{title}**")
                    else:  # the question links to where its detail is
                        st.page_link(page, label=f"**{title}**", icon=":material/arrow_forward:")
                    if name == "nodes" and glance.nodes_window:
                        st.caption(glance.nodes_window)
                    st.markdown("\n".join(f"- {line}" for line in lines))
