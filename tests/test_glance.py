"""The Overview's answers at a glance (dashboard/glance.py, issue 28) on a lab whose every
answer is known (tests/verdict_lab.py): its result sets from a real store, the sentences
they make, and the block on the administrator's page under AppTest."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import glance
from dashboard.strings import use_language
from queries import pages
from queries.runner import StoreReader, reader
from tests import verdict_lab
from tests.test_pages import open_page

WEEK = {"range": "custom", "from": "2026-12-01", "to": "2026-12-07"}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return verdict_lab.build(tmp_path_factory.mktemp("glance") / "store")


@pytest.fixture(scope="module")
def answers(lab: Path) -> glance.Glance:
    store = reader(lab, "UTC")
    return _answers(store)


def _answers(store: StoreReader) -> glance.Glance:
    data = pages.overview(store, verdict_lab.WEEK)
    costs = pages.api_cost(store, verdict_lab.WEEK)
    found = pages.glance(store, verdict_lab.WEEK) | ({"api_cost_totals": costs["totals"]} if costs else {})
    with use_language("en"):
        return glance.build(data, found, "UTC")


def test_budget_refusals_are_counted_per_key(lab: Path) -> None:
    refusals = reader(lab, "UTC").run("refusals_by_key", verdict_lab.WEEK).set_index("key_alias")
    assert refusals.loc["priya-claude", "budget_refused"] == 41
    assert refusals.loc["priya-claude", "rate_limited"] == 0
    assert refusals.loc["user2-laptop", "rate_limited"] == 3
    assert len(refusals) == 2  # the failures of the failing node are no refusals


def test_the_top_user_with_their_main_client(answers: glance.Glance) -> None:
    # user3 pays 4x per request, and used Claude Code for 4 in 5 of them
    top = answers.users[0]
    assert top.startswith("**user3**"), answers.users
    assert "mostly Claude Code (76 %)" in top  # by spend: 4 in 5 of its requests, on cheaper nodes too
    assert len(answers.users) == 3 + 1  # three named, then "and 2 more" (user0, priya)
    assert answers.users[-1] == "and 2 more"


def test_every_problem_node_is_named_with_its_reason(answers: glance.Glance) -> None:
    text = "\n".join(answers.nodes)
    assert "**spark** is failing: 20 % of 50 requests failed (10)" in text
    assert "**l40-b** is slow on qwen3-coder-30b: first token p95 12.0 s against" in text
    assert "**solo** is slow on glm-4.6" in text and "in the days before" in text
    assert "**retired** is down: nothing served in these days, 45 requests in the days before" in text
    assert "good: **blackwell**, **l40-a**, **l40-c**" in text
    assert "too few requests to judge (under 30): **tiny**" in text


def test_budgets_that_need_attention_are_named(answers: glance.Glance) -> None:
    over = next(line for line in answers.budgets if line.startswith("Over budget"))
    for key in ("user0-laptop", "shared-gpu", "priya-claude"):
        assert f"**{key}**" in over
    assert "**user0-laptop** (user0) $12.00 of $10.00" in over
    risk = next(line for line in answers.budgets if line.startswith("At risk"))
    # user1: $6 left at $0.80 a day (its $4 over the 5 days of its period) runs out 7.5 days
    # after the copy (Dec 8 00:00 UTC), 25 days before its reset
    assert "**user1-laptop** (user1) runs out 2026-12-15, before its reset 2027-01-02" in risk
    assert "**ta-notebook** (ta) 85 % used" in risk
    assert "**user2-laptop**" in risk
    assert "user3-laptop" not in "\n".join(answers.budgets)  # within its budget
    assert "Refused for budget in this range: **priya-claude** (41)" in answers.budgets
    assert "Refused for a rate limit in this range: **user2-laptop** (3)" in answers.budgets


def test_without_a_price_book_the_block_says_so(answers: glance.Glance) -> None:
    assert answers.api_cost == ["No price book: no API prices to compare with (`prices.toml`)."]


def test_the_api_cost_is_a_cost_and_a_ratio_never_a_negative_saving() -> None:
    totals = pd.DataFrame(
        [{"api_cost_usd": 3.08, "priced_spend_usd": 9.44, "priced_requests": 10, "unpriced_requests": 2}]
    )
    with use_language("en"):
        lines = glance.api_cost(totals)
    assert lines[0] == (
        "**$3.08** at API prices; the lab's own accounting (LiteLLM's spend) says **$9.44**: "
        "API prices are **0.33x** of it."
    )
    assert lines[1] == "2 requests of models without a price are not in it."
    assert "-" not in lines[0]


def test_an_empty_range_says_so_in_words(lab: Path) -> None:
    store = reader(lab, "UTC")
    empty = verdict_lab.WEEK.previous().previous().previous()
    data = pages.overview(store, empty)
    found = pages.glance(store, empty)
    with use_language("en"):
        answers = glance.build(data, found, "UTC")
    assert answers.users == ["No requests in this range."]
    assert answers.nodes == ["No node served a request in these days or the ones before."]


def test_the_block_heads_the_administrators_overview(lab: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(lab, monkeypatch, "Overview", **WEEK)
    block = _block(at)
    assert block.index("**Who used the most**") < block.index("**What it would cost at API prices**")
    for expected in ("**user3**", "**l40-b** is slow", "**retired** is down", "**priya-claude**"):
        assert expected in block, block
    links = [link.proto.label for link in at.get("page_link")]
    assert links == ["**How the nodes serve**", "**Budgets that need attention**"]


def test_the_block_in_korean(lab: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(lab, monkeypatch, "개요", lang="ko", **WEEK)
    block = _block(at)
    assert "**가장 많이 사용한 사람**" in block and "**l40-b** qwen3-coder-30b에서 느림" in block, block


def _block(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_the_budgets_page_counts_budget_refusals_per_key(lab: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LiteLLM's BudgetExceededError rows: 41 for priya-claude in the week before the key
    list was copied, beside its status and forecast; every other key none."""
    at = open_page(lab, monkeypatch, "Budgets")
    shown = at.dataframe[0].value
    table = getattr(shown, "data", shown).set_index("key_alias")
    assert table.loc["priya-claude", "budget_refused"] == 41
    assert table.drop("priya-claude")["budget_refused"].eq(0).all()
    assert table.loc["priya-claude", "level"] == "over budget"
    assert table.loc["user1-laptop", "level"] == "at risk"  # runs out before its reset, at 40 %
    assert table.loc["user1-laptop", "forecast"] == "runs out before the reset"


def test_the_nodes_page_opens_on_the_verdicts_and_the_worst_node(
    lab: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = open_page(lab, monkeypatch, "Nodes", **WEEK)
    markdown = [m.value for m in at.markdown]
    verdicts = markdown.index("**Each node's verdict**")
    assert verdicts < markdown.index("**Per GPU node**")
    lines = markdown[verdicts + 1]
    assert (
        lines.index("**retired** is down")
        < lines.index("**spark** is failing")
        < lines.index("**l40-b** is slow")
    )
    # the load table opens on the worst node it has rows for (retired served nothing)
    assert at.selectbox(key="load_node").value == "spark"
    # no answer here was too short to time: a column of zeros says nothing, and is left out
    first = at.dataframe[0].value
    nodes = getattr(first, "data", first)
    assert "speed_too_short" not in nodes and {"requests", "ttft_p50_ms"} <= set(nodes)


def test_a_store_without_a_key_list_shows_its_pages(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the ETL has copied LiteLLM's keys (a store written by ingest alone), the
    Budgets page failed on the week of refusals it had no key list to place."""
    store = verdict_lab.build(tmp_path_factory.mktemp("no-keys") / "store", keys=False)
    for page in ("Budgets", "Overview", "Nodes"):
        at = open_page(store, monkeypatch, page, **WEEK)
        assert not at.exception, (page, at.exception)
    answers = _answers(reader(store, "UTC"))
    assert answers.budgets == ["No key list copied yet: no budgets to check."]


def test_a_verdict_is_judged_over_the_last_seven_whole_days_whatever_the_range() -> None:
    """The verdicts' percentiles come from the Nodes page's day partials: over a 30-day
    range and the 30 days before, a first Overview computed 62 days of them (35 s at 30M
    requests), again each quarter hour as the range rolled. Seven whole local days,
    moving at midnight only."""
    import datetime as dt

    from dashboard.view_state import ViewState

    seoul = "Asia/Seoul"
    at_10 = dt.datetime(2026, 12, 7, 1, 10, tzinfo=dt.UTC)  # 10:10 in Seoul
    windows = {
        pages.verdict_window(ViewState(range=r, tz=seoul).filters(at_10 + dt.timedelta(minutes=m)))
        for r in ("24h", "7d", "30d", "month")
        for m in (0, 15, 30, 45, 120)
    }
    assert len(windows) == 1
    (window,) = windows
    assert window.start == dt.datetime(2026, 11, 30, 15, tzinfo=dt.UTC)  # Dec 1, 00:00 in Seoul
    assert window.end == dt.datetime(2026, 12, 7, 15, tzinfo=dt.UTC)  # the end of today
    assert window.previous().start == dt.datetime(2026, 11, 23, 15, tzinfo=dt.UTC)
    assert not window.users and not window.month_to_date
