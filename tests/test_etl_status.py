"""The "ETL status" page and its queries, on a store written by real runs against a real
LiteLLM database: a good run, then a failed one."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from contract.store import RUNS_FILE
from dashboard.auth import Identity
from etl.errors import SourceUnreachable
from etl.run import run_etl
from queries.pages import etl_status
from queries.runner import StoreReader
from queries.scope import ScopedReader
from settings.config import load_config
from tests.litellm_db import LiteLLMDatabase, iter_sample_rows, spend_log
from tests.test_pages import APP, open_page


@pytest.fixture
def store(litellm: LiteLLMDatabase, tmp_path: Path) -> Path:
    """One good run (8 requests, 2 master-key and 2 health-check rows dropped), then one
    that cannot reach its database."""
    litellm.insert_spend_logs(iter_sample_rows())
    path = tmp_path / "store"
    run_etl(load_config(None, source=litellm.url, store=path, env={}))
    with pytest.raises(SourceUnreachable):
        run_etl(load_config(None, source="postgresql://lab@127.0.0.1:1/litellm", store=path, env={}))
    return path


def test_the_status_queries(store: Path, litellm: LiteLLMDatabase) -> None:
    data = etl_status(StoreReader(store), dt.datetime.now(dt.UTC))
    runs = data["etl_runs"]
    assert list(runs["status"]) == ["failed", "ok"]  # newest first
    assert "cannot connect to the LiteLLM database" in runs["error"].iloc[0]
    assert runs.iloc[1][["rows_written", "dropped_master_key", "dropped_health_check"]].tolist() == [8, 2, 2]
    health = data["etl_health"].iloc[0]
    assert (health["runs_24h"], health["failed_24h"], health["rows_written_24h"]) == (2, 1, 8)
    assert (health["dropped_master_key_24h"], health["dropped_health_check_24h"]) == (2, 2)
    assert health["last_ok_run"] < health["last_failed_run"]
    [source] = data["sources"].to_dict("records")
    database = litellm.url.rsplit("/", 1)[1]
    assert source["source"] == f"127.0.0.1:5432/{database}" and source["cursor_column"] == "created_at"
    stored = pd.read_parquet(store / "requests")
    assert source["newest_request"] == stored["start_time"].max()
    nodes = data["newest_by_node"].set_index("node")
    assert nodes["newest_request"].to_dict() == stored.groupby("node")["start_time"].max().to_dict()
    # the 24 hours count back from "now": a day after the newest request nothing is recent
    later = etl_status(StoreReader(store), stored["start_time"].max().to_pydatetime() + dt.timedelta(days=2))
    assert later["newest_by_node"]["requests_24h"].sum() == 0


def test_views_of_the_status_page_within_a_minute_share_one_answer(store: Path) -> None:
    """Fifty administrators opening the page must not each cost a round of queries."""
    reader = StoreReader(store)
    minute = dt.datetime.now(dt.UTC).replace(second=0, microsecond=0)
    first = etl_status(reader, minute + dt.timedelta(seconds=5))
    misses = reader._results.misses
    again = etl_status(reader, minute + dt.timedelta(seconds=50))
    assert reader._results.misses == misses  # every result shared
    assert all(again[name].equals(first[name]) for name in first)
    etl_status(reader, minute + dt.timedelta(seconds=65))
    assert reader._results.misses > misses  # the next minute asks again


def test_the_status_page(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(store, monkeypatch, "ETL status")
    assert "ETL status" in [h.value for h in at.header]
    assert any("The last ETL run failed: cannot connect" in e.value for e in at.error)
    cards = {m.label: m for m in at.metric}
    assert cards["Runs, last 24 h"].value == "2" and cards["Runs, last 24 h"].delta == "1 failed"
    assert cards["Requests copied by the last 24 h of runs"].value == "8"
    assert "Newest first, at most the last 50 runs (etl_runs.parquet); times in UTC." in [
        c.value for c in at.main.caption
    ]
    assert cards["Noise dropped, last 24 h"].value == "4"
    sources, nodes, runs, left_out = (d.value for d in at.dataframe)
    assert sources["source"].iloc[0].startswith("127.0.0.1:5432/")
    assert list(runs["status"]) == ["failed", "ok"]
    # the runs' noise, one row per run as in the runs table
    dropped = ["dropped_master_key", "dropped_health_check", "dropped_by_rule"]
    assert len(left_out) == len(runs) and int(left_out[dropped].to_numpy().sum()) == 4
    assert set(nodes["node"]) == set(pd.read_parquet(store / "requests")["node"])


def test_students_do_not_get_the_page(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USAGE_STORE", str(store))
    at = AppTest.from_file(APP, default_timeout=60)
    key = str(pd.read_parquet(store / "requests")["api_key_hash"].iloc[0])
    at.session_state["identity"] = Identity(role="student", name="s", keys=(key,), key=key)
    at.run()
    assert not at.exception, at.exception
    pages = {p["page_name"] for p in at._registered_pages.values()}
    assert "My usage" in pages and "ETL status" not in pages


def test_a_user_keys_request_tagged_as_a_health_check_is_usage_and_counted(
    litellm: LiteLLMDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tags are the client's to set: a student's $99 request carrying LiteLLM's
    health-check tag is kept, and the status page says how many such requests came in."""
    tagged = spend_log(spend=99.0, request_tags=["litellm-internal-health-check"])
    litellm.insert_spend_logs([*iter_sample_rows(), tagged])
    store = tmp_path / "store"
    run_etl(load_config(None, source=litellm.url, store=store, env={}))
    stored = pd.read_parquet(store / "requests")
    assert stored.loc[stored["request_id"] == tagged["request_id"], "spend"].tolist() == [99.0]
    at = open_page(store, monkeypatch, "ETL status")
    assert any(w.value.startswith("1 request(s) in the last 24 h came from user keys") for w in at.warning)
    # an etl_runs file from before the count existed: a run appends to it all the same
    old = pq.read_table(store / RUNS_FILE).drop_columns(["kept_noise_tagged"])
    pq.write_table(old, store / RUNS_FILE)
    run_etl(load_config(None, source=litellm.url, store=store, env={}))
    runs = etl_status(StoreReader(store), dt.datetime.now(dt.UTC))["etl_runs"]
    assert runs["kept_noise_tagged"].iloc[0] == 0 and pd.isna(runs["kept_noise_tagged"].iloc[1])


def test_a_student_learns_that_the_copy_failed_and_since_when_not_why(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The error names the database's host, port and user: it stays with administrators,
    restricted in SQL (a student's query never returns it), not only left off the page."""
    key = str(pd.read_parquet(store / "requests")["api_key_hash"].iloc[0])
    student = ScopedReader(StoreReader(store), (key,))
    assert pd.isna(student.run("store_status").iloc[0]["last_run_error"])
    assert "cannot connect" in StoreReader(store).run("store_status").iloc[0]["last_run_error"]
    monkeypatch.setenv("USAGE_STORE", str(store))
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["identity"] = Identity(role="student", name="s", keys=(key,), key=key)
    at.run()
    assert not at.exception, at.exception
    shown = " ".join(str(e.value) for e in (*at.error, *at.warning, *at.caption, *at.markdown))
    assert "The last copy from the lab's LiteLLM failed" in shown
    assert "127.0.0.1" not in shown and "cannot connect" not in shown
