"""The page as it stands: the store's status, or how to fill an empty store."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from etl.config import load_config
from etl.run import run_etl
from tests.litellm_db import LiteLLMDatabase, iter_sample_rows

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_an_empty_store_says_how_to_run_the_etl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("USAGE_STORE", str(tmp_path / "empty"))
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    assert "The store is empty" in [s.value for s in at.subheader]
    assert any("python -m etl run" in c.value for c in at.code)


def test_a_filled_store_shows_what_it_holds(
    litellm: LiteLLMDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    litellm.insert_spend_logs(iter_sample_rows())
    store = tmp_path / "store"
    run_etl(load_config(source=litellm.url, store=store, env={}))
    monkeypatch.setenv("USAGE_STORE", str(store))
    monkeypatch.setenv("USAGE_TIMEZONE", "Asia/Seoul")
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Requests stored"] == "8"
    assert metrics["Users"] == "6"
    # the newest request started 2026-11-17 00:19:55 UTC: 09:19 in Seoul
    assert metrics["Newest request"] == "2026-11-17 09:19"
