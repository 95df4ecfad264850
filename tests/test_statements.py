"""Monthly statements (issue 32): a month closed from rows a real LiteLLM database holds,
written once into the store and never changed by what comes after (late rows, a new price,
a renamed key); the late rows listed on the next closed month as adjustments; a student's
statement holds only their keys; bad requests refused with a message that says why."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pandas as pd
import pytest

from contract.errors import StoreCorrupt
from contract.statements import (
    LINES_FILE,
    closed_months,
    counted_request_ids,
    month_span,
    parse_month,
    read_statement,
    statement_dir,
)
from dashboard.auth import Identity
from dashboard.statements import document
from etl.run import ingest_rows, run_etl
from ops.statements import StatementRefused, close_due, close_month, reopen_month
from queries import pages
from queries.filters import Filters
from queries.runner import StoreReader
from queries.scope import ScopedReader
from settings.config import Config, load_config
from settings.price_book import Price
from settings.statements import StatementSettings
from tests import known_store
from tests.litellm_db import LiteLLMDatabase
from tests.test_etl_cli import cli
from tests.test_pages import open_page, open_page_as

SEOUL = "Asia/Seoul"
VLLM, LLAMACPP = "vllm_streamed_reasoning_cached", "llamacpp_non_streamed"
TAKEN = dt.date(2026, 11, 1)
PRICES = (
    Price("gpt-oss-120b", "openai/gpt-oss-120b", 0.10, 0.05, 0.50, TAKEN),
    Price("qwen3-coder-30b", "qwen/qwen3-coder-30b-a3b-instruct", 0.06, 0.03, 0.25, TAKEN),
)
NEW_PRICES = tuple(dataclasses.replace(p, input=p.input * 10, output=p.output * 10) for p in PRICES)
CLOSING = dt.datetime(2026, 12, 6, 3, 0, tzinfo=dt.UTC)


def request(
    kind: str, user: str, start: dt.datetime, usage: tuple[int, int, int, int], spend: float
) -> dict[str, Any]:
    return known_store.request(
        kind, user, start, request_id=f"{user}-{start:%m%d%H%M}", usage=usage, duration_ms=900, spend=spend
    )


ROWS = [
    # 1 November 01:00 in Seoul, still 31 October in UTC: November's
    request(VLLM, "alice", dt.datetime(2026, 10, 31, 16, 0), (1000, 200, 300, 100), 0.001),
    request(VLLM, "alice", dt.datetime(2026, 11, 5, 10, 0), (2000, 1000, 400, 150), 0.002),
    request(LLAMACPP, "bob", dt.datetime(2026, 11, 9, 10, 0), (3000, 1000, 500, 0), 0.0005),
    # 1 December 00:30 in Seoul, still 30 November in UTC: December's
    request(LLAMACPP, "carol", dt.datetime(2026, 11, 30, 15, 30), (500, 0, 100, 0), 0.0001),
]
# a November request LiteLLM writes after November was closed (a late spend-log row)
LATE = request(VLLM, "dave", dt.datetime(2026, 11, 30, 10, 0), (700, 0, 70, 0), 0.0007)


def config_of(litellm: LiteLLMDatabase, store: Path, prices: tuple[Price, ...] = PRICES) -> Config:
    config = load_config(None, source=litellm.url, store=store, env={"USAGE_TIMEZONE": SEOUL})
    return dataclasses.replace(config, prices=prices)


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def month_totals(reader: StoreReader, month: str) -> dict[str, float]:
    span = month_span(parse_month(month), SEOUL)
    filters = Filters(start=span.start, end=span.end, tz=SEOUL)
    totals = reader.run("totals", filters).iloc[0]
    cost = reader.run("api_cost_totals", filters).iloc[0]
    return {
        "requests": int(totals["requests"]),
        "spend_usd": totals["spend_usd"],
        "api_cost_usd": cost["api_cost_usd"],
    }


def test_a_closed_month_never_changes_and_late_rows_go_to_the_next(
    litellm: LiteLLMDatabase, store: Path
) -> None:
    litellm.insert_spend_logs(ROWS)
    config = config_of(litellm, store)
    run_etl(config)
    at_closing = month_totals(StoreReader(store, zone=SEOUL, prices=PRICES), "2026-11")

    closed = close_month(config, "2026-11", now=CLOSING)

    # what the month's page showed at that moment: 3 requests (alice's of 1 November in Seoul
    # counted, carol's of 1 December not)
    assert at_closing["requests"] == 3
    assert closed.totals["requests"] == at_closing["requests"]
    assert closed.totals["spend_usd"] == pytest.approx(at_closing["spend_usd"])
    assert closed.totals["api_cost_usd"] == pytest.approx(at_closing["api_cost_usd"])
    lines = closed.lines.to_pandas()
    assert set(lines["kind"]) == {"usage"} and set(lines["user"]) == {"alice", "bob"}
    alice = lines[lines["user"] == "alice"].iloc[0]
    assert (alice["requests"], alice["prompt_cached_tokens"], alice["prompt_uncached_tokens"]) == (
        2,
        1200,
        1800,
    )
    assert (alice["completion_tokens"], alice["reasoning_tokens"]) == (700, 250)
    # (1800 * 0.10 + 1200 * 0.05 + 700 * 0.50) / 1e6
    assert alice["api_cost_usd"] == pytest.approx(590e-6)
    assert counted_request_ids(store, parse_month("2026-11")).num_rows == 3
    before = files_of(closed.folder)
    shown_before = StoreReader(store, zone=SEOUL, prices=PRICES).run("statement", month="2026-11")

    # after: a late November row, a new price book, alice's key renamed and given a team
    litellm.insert_spend_logs([LATE])
    litellm.execute(
        'INSERT INTO "LiteLLM_VerificationToken" (token, key_name, key_alias, user_id, team_id, max_budget) '
        "VALUES (%s, 'sk-...lice', 'alice-renamed', 'alice', 'vision-team', 25.0)",
        [known_store.key_of("alice")],
    )
    repriced = config_of(litellm, store, NEW_PRICES)
    summary = run_etl(repriced)
    assert summary.rows_written == 1, (summary.rows_read, summary.duplicates_skipped, summary.dropped)

    assert files_of(closed.folder) == before  # byte for byte
    reader = StoreReader(store, zone=SEOUL, prices=NEW_PRICES)
    assert month_totals(reader, "2026-11")["requests"] == 4  # the page's November moved ...
    shown = reader.run("statement", month="2026-11")
    pd.testing.assert_frame_equal(shown, shown_before)  # ... its statement did not
    listed = reader.run("statements").set_index("month").loc["2026-11"]
    assert (listed["requests"], listed["adjustment_requests"]) == (3, 0)

    with pytest.raises(StatementRefused, match="was closed on"):
        close_month(repriced, "2026-11", now=CLOSING)

    # the open month's draft lists the late row as the adjustment its closing will make
    draft = pages.statement(reader, "2026-12", SEOUL, closed=False)
    pending = draft[draft["kind"] == "adjustment"]
    assert list(pending["user"]) == ["dave"] and list(pending["of_month"]) == ["2026-11"]

    december = close_month(repriced, "2026-12", now=dt.datetime(2027, 1, 3, tzinfo=dt.UTC))
    adjustments = december.lines.to_pandas().query("kind == 'adjustment'")
    assert list(adjustments["of_month"]) == ["2026-11"] and list(adjustments["user"]) == ["dave"]
    assert december.adjustments["requests"] == 1
    assert december.totals["requests"] == 1  # carol's, 1 December in Seoul
    after = StoreReader(store, zone=SEOUL, prices=NEW_PRICES)
    assert after.run("statements")["month"].tolist() == ["2026-12", "2026-11"]

    # another late November row: January lists it, and not dave's again (December did)
    litellm.insert_spend_logs(
        [request(VLLM, "erin", dt.datetime(2026, 11, 30, 11, 0), (50, 0, 5, 0), 0.0001)]
    )
    run_etl(repriced)
    january = close_month(repriced, "2027-01", now=dt.datetime(2027, 2, 3, tzinfo=dt.UTC))
    listed = january.lines.to_pandas().query("kind == 'adjustment'")
    assert list(listed["user"]) == ["erin"] and list(listed["of_month"]) == ["2026-11"]
    nothing_left = pages.statement(after, "2027-02", SEOUL, closed=False)
    assert nothing_left.query("kind == 'adjustment'").empty


def test_a_student_sees_only_their_own_lines(litellm: LiteLLMDatabase, store: Path) -> None:
    litellm.insert_spend_logs(ROWS)
    config = config_of(litellm, store)
    run_etl(config)
    close_month(config, "2026-11", now=CLOSING)
    reader = StoreReader(store, zone=SEOUL, prices=PRICES)
    alice = ScopedReader(reader, (known_store.key_of("alice"),))

    lines = alice.run("statement", month="2026-11")
    assert set(lines["api_key_hash"]) == {known_store.key_of("alice")} and len(lines) == 1
    listed = alice.run("statements").iloc[0]
    assert (listed["requests"], listed["users"]) == (2, 1)
    nobody = ScopedReader(reader, ())
    assert nobody.run("statement", month="2026-11").empty
    assert nobody.run("statements")["requests"].tolist() == [0]


def test_closing_too_early_or_a_bad_month_is_refused(litellm: LiteLLMDatabase, store: Path) -> None:
    config = config_of(litellm, store)
    run_etl(config)
    for month in ("2026-12", "2027-01"):  # the current month in Seoul, and a future one
        with pytest.raises(StatementRefused, match="has not ended yet in Asia/Seoul"):
            close_month(config, month, now=CLOSING)
    # 1 December 00:30 in Seoul is still November in UTC: November has ended all the same
    empty = close_month(config, "2026-11", now=dt.datetime(2026, 11, 30, 15, 30, tzinfo=dt.UTC))
    assert empty.totals["requests"] == 0 and empty.lines.num_rows == 0
    assert closed_months(store) == [parse_month("2026-11")]

    result = cli("close-month", "2026-13", "--store", str(store))
    assert result.returncode == 2 and "'2026-13' is not a month: write it YYYY-MM" in result.stderr
    result = cli("close-month", "2026-11", "--store", str(store))
    assert result.returncode == 2 and "its statement never changes" in result.stderr


def test_reopening_keeps_the_statement_and_a_changed_one_is_not_shown(
    litellm: LiteLLMDatabase, store: Path
) -> None:
    litellm.insert_spend_logs(ROWS)
    config = config_of(litellm, store)
    run_etl(config)
    close_month(config, "2026-10", now=CLOSING)
    close_month(config, "2026-11", now=CLOSING)
    with pytest.raises(StatementRefused, match="while a later month is closed"):
        reopen_month(config, "2026-10", "a wrong key list", now=CLOSING)
    with pytest.raises(StatementRefused, match="say why"):
        reopen_month(config, "2026-11", "  ", now=CLOSING)

    aside = reopen_month(config, "2026-11", "a price was wrong", now=CLOSING)
    assert aside.is_dir() and "a price was wrong" in (aside / "reopened.json").read_text(encoding="utf-8")
    assert closed_months(store) == [parse_month("2026-10")]
    again = close_month(config, "2026-11", now=CLOSING)
    assert again.totals["requests"] == 3

    # a closed statement changed on disk is never shown as if closed
    (statement_dir(store, parse_month("2026-11")) / LINES_FILE).write_bytes(b"not the closed lines")
    with pytest.raises(StoreCorrupt, match="changed after the month was closed"):
        read_statement(store, parse_month("2026-11"))
    reader = StoreReader(store, zone=SEOUL, prices=PRICES)
    assert reader.run("statements")["month"].tolist() == ["2026-10"]
    assert "statements/month=2026-11" in reader.damaged()


def closed_store(tmp_path: Path) -> Path:
    """November closed from known rows (ingested as the ETL does), and one of its names a
    spreadsheet formula and markup, as a key holder can set them."""
    store = tmp_path / "store"
    rows = [
        *ROWS,
        request(
            LLAMACPP, '=HYPERLINK("x")<b>eve</b>', dt.datetime(2026, 11, 12, 10, 0), (10, 0, 5, 0), 0.00001
        ),
    ]
    config = dataclasses.replace(Config(store=store), prices=PRICES)
    ingest_rows(config, rows)
    close_month(
        dataclasses.replace(config, dashboard=dataclasses.replace(config.dashboard, timezone=SEOUL)),
        "2026-11",
        now=CLOSING,
    )
    return store


def test_the_statements_page_shows_the_closed_month_to_each_as_they_may_see_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = closed_store(tmp_path)
    at = open_page(store, monkeypatch, "statements")
    at.selectbox(key="statement_month").set_value("2026-11").run()
    assert not at.exception
    lines = at.dataframe[0]  # then the list of months
    assert set(lines.value["user"]) == {"alice", "bob", '=HYPERLINK("x")<b>eve</b>'}
    assert any("is closed" in s.value for s in at.success)

    key = known_store.key_of("alice")
    alice = Identity(role="student", name="alice", keys=(key,), key=key)
    student = open_page_as(alice, store, monkeypatch, "statements")
    student.selectbox(key="statement_month").set_value("2026-11").run()
    [own] = student.dataframe  # no list of months for a student
    assert list(own.value["user"]) == ["alice"]

    reader = StoreReader(store, prices=PRICES)
    page = document(reader.run("statement", month="2026-11"), "2026-11", closed=True)
    assert "&lt;b&gt;eve&lt;/b&gt;" in page and "<b>eve" not in page and "@page { size: A4" in page
    assert "<tr class='total'><td class='text'>Total</td>" in page and "<td class='count'>4</td>" in page


def test_a_run_closes_the_months_due_by_itself_when_asked(litellm: LiteLLMDatabase, store: Path) -> None:
    litellm.insert_spend_logs(ROWS)
    config = dataclasses.replace(config_of(litellm, store), statements=StatementSettings(close_after_days=3))
    run_etl(config)
    # November ends on 1 December, 00:00 in Seoul (30 November, 15:00 UTC): due 3 days later
    assert close_due(config, dt.datetime(2026, 12, 3, 14, 0, tzinfo=dt.UTC)) == []
    [november] = close_due(config, dt.datetime(2026, 12, 3, 15, 0, tzinfo=dt.UTC))
    assert november.name == "2026-11" and november.totals["requests"] == 3
    # a store with none closed closes the last ended month only, not its whole history;
    # later, every month since the newest closed one
    assert [s.name for s in close_due(config, dt.datetime(2027, 2, 5, tzinfo=dt.UTC))] == [
        "2026-12",
        "2027-01",
    ]
    assert [m.isoformat()[:7] for m in closed_months(store)] == ["2026-11", "2026-12", "2027-01"]


def test_the_etl_command_closes_a_month_due_after_its_run(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    litellm.insert_spend_logs(ROWS)
    settings = tmp_path / "usage.toml"
    settings.write_text(
        '[dashboard]\ntimezone = "Asia/Seoul"\n\n[statements]\nclose_after_days = 2\n', encoding="utf-8"
    )
    store = tmp_path / "store"
    result = cli("run", "--source", litellm.url, "--store", str(store), "--config", str(settings))
    assert result.returncode == 0, result.stderr
    # the last ended month is due 2 days after it ended in Seoul (and only it: nothing was
    # closed before); this test runs on the real clock
    now = dt.datetime.now(dt.UTC)
    last = (now.astimezone(ZoneInfo(SEOUL)).date().replace(day=1) - dt.timedelta(days=1)).replace(day=1)
    due = month_span(last, SEOUL).end + dt.timedelta(days=2) <= now
    assert closed_months(store) == ([last] if due else [])
    assert ("closed" in result.stderr) == due
    settings.write_text("[statements]\nclose_after_days = -1\n", encoding="utf-8")
    result = cli("run", "--source", litellm.url, "--store", str(store), "--config", str(settings))
    assert result.returncode == 2 and "statements.close_after_days must be a number of days" in result.stderr
