"""The query runner and a meta-test that runs every SQL file, so that none can rot."""

from __future__ import annotations

from pathlib import Path

import pytest

from etl.config import load_config
from etl.run import run_etl
from queries.runner import UnknownQuery, query_names, run
from tests.litellm_db import LiteLLMDatabase, iter_sample_rows


@pytest.fixture
def filled_store(litellm: LiteLLMDatabase, tmp_path: Path) -> Path:
    litellm.insert_spend_logs(iter_sample_rows())
    store = tmp_path / "store"
    run_etl(load_config(source=litellm.url, store=store, env={}))
    return store


@pytest.mark.parametrize("name", query_names())
def test_every_query_runs_on_an_empty_and_a_filled_store(
    name: str, filled_store: Path, tmp_path: Path
) -> None:
    empty = run(name, tmp_path / "nothing-here")
    filled = run(name, filled_store)
    assert list(empty.columns) == list(filled.columns)


def test_store_status(filled_store: Path) -> None:
    status = run("store_status", filled_store).iloc[0]
    assert status["requests"] == 8 and status["users"] == 6
    assert status["last_run_status"] == "ok"


def test_an_unknown_query_names_the_known_ones() -> None:
    with pytest.raises(UnknownQuery, match="store_status"):
        run("nope", Path())
