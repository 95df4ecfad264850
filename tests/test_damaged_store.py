"""A damaged file in the store stops nobody: the pages and the sign-in serve the rest,
name the file to administrators (students only learn that something is left out), and
the same damaged bytes are not read again on every page."""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from contract.store import KEYS_FILE
from dashboard import auth, signin
from etl.run import ingest_rows
from settings.config import Config
from tests import known_store
from tests.litellm_db import spend_log
from tests.test_access import PASSWORD, SEOUL_NOV_21, app, sign_in

DAMAGED_DAY = "requests/date=2026-11-20/part-0.parquet"  # alice's first two requests, bob's failure


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = known_store.build(tmp_path / "store")
    (path / DAMAGED_DAY).write_bytes(b"not parquet at all " * 50)
    return path


@pytest.fixture(autouse=True)
def fresh_budgets() -> None:
    signin.gate().reset()


@pytest.fixture(scope="module")
def password_hash() -> str:
    return auth.hash_password(PASSWORD)


def texts(at: AppTest) -> str:
    return " ".join(str(e.value) for e in (*at.error, *at.warning, *at.caption, *at.markdown))


def test_the_overview_serves_the_other_days_and_names_the_damaged_one(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="queries")
    at = sign_in(app(store, monkeypatch, password_hash, **SEOUL_NOV_21), password=PASSWORD)
    assert not at.exception, at.exception
    cards = {m.label: m.value for m in at.metric}
    assert cards["Requests"] == "1"  # bob's llama.cpp request of Nov 21 (UTC), the day still readable
    assert DAMAGED_DAY in texts(at) and "etl doctor" in texts(at)
    for _ in range(3):  # more views, more sessions: the damaged bytes are not read again
        at.run()
        sign_in(app(store, monkeypatch, password_hash, **SEOUL_NOV_21), password=PASSWORD)
    assert sum("cannot read the day file" in r.getMessage() for r in caplog.records) == 1


def test_a_student_signs_in_and_learns_only_that_something_is_left_out(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    at = sign_in(app(store, monkeypatch, password_hash, **SEOUL_NOV_21), key="sk-bob")
    assert not at.exception, at.exception
    assert at.metric  # signed in, and the page is there
    assert "Part of the data could not be read" in texts(at)
    assert "part-0.parquet" not in texts(at) and "date=" not in texts(at)


def test_a_damaged_key_list_leaves_the_pages_up(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    (store / KEYS_FILE).write_bytes(b"PAR1 but nothing else")
    at = sign_in(app(store, monkeypatch, password_hash, **SEOUL_NOV_21), password=PASSWORD)
    assert not at.exception, at.exception
    assert at.metric and KEYS_FILE in texts(at)


def test_the_etl_sets_a_damaged_day_aside_and_the_page_names_it(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    """A run with new requests for the damaged day writes them (nothing stops), keeps the
    damaged file beside the new one, and administrators are told which file it was."""
    new = spend_log(start=dt.datetime(2026, 11, 20, 16, 0), spend=0.5)
    ingest_rows(Config(store=store, nodes=known_store.NODES), [new])
    [aside] = (store / DAMAGED_DAY).parent.glob("part-0.parquet.damaged-*")
    assert aside.read_bytes().startswith(b"not parquet at all")
    at = sign_in(app(store, monkeypatch, password_hash, **SEOUL_NOV_21), password=PASSWORD)
    assert not at.exception, at.exception
    assert aside.name in texts(at)
    assert {m.label: m.value for m in at.metric}["Requests"] == "2"  # bob's, and the new one
