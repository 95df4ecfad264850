"""Shared fixtures: a real, migrated LiteLLM PostgreSQL database per test, and stores."""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

import psycopg
import pytest

from state.db import MEMORY, STATE_URL_ENV
from tests import browser, litellm_db
from tests.litellm_db import LiteLLMDatabase

FAILED = pytest.StashKey[bool]()

# The dashboard's own state (sessions, sign-in budgets) in this process's memory for the
# AppTests; a server a test starts gets a state folder of its own (tests/browser.py)
os.environ[STATE_URL_ENV] = MEMORY


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Once a test is over (its fixtures torn down, so its servers stopped), its server
    logs go if it passed and stay, beside its screenshot, if any phase of it failed."""
    report = yield
    item.stash[FAILED] = item.stash.get(FAILED, False) or report.failed
    if report.when == "teardown":
        browser.settle_logs(failed=item.stash[FAILED])
    return report


@pytest.fixture(scope="session")
def pg_templates() -> Iterator[tuple[str, dict[str, str]]]:
    try:
        with litellm_db.admin() as conn:
            conn.execute("SELECT 1")
    except psycopg.OperationalError as exc:
        pytest.fail(
            f"PostgreSQL is not reachable at {litellm_db.ADMIN_URL} ({exc}). The database tests "
            "never skip: start PostgreSQL (see README) or set TEST_POSTGRES_URL.",
            pytrace=False,
        )
    litellm_db.drop_stale_databases()
    session = litellm_db.session_id()
    templates: dict[str, str] = {}
    yield session, templates
    for name in templates.values():
        litellm_db.drop_database(name)


@pytest.fixture
def make_litellm_db(
    pg_templates: tuple[str, dict[str, str]],
) -> Iterator[Callable[[str], LiteLLMDatabase]]:
    session, templates = pg_templates
    created: list[str] = []

    def make(version: str = "all") -> LiteLLMDatabase:
        if version not in templates:
            templates[version] = litellm_db.build_template(version, session)
        db = litellm_db.create_database(templates[version], session)
        created.append(db.name)
        return db

    yield make
    for name in created:
        litellm_db.drop_database(name)


@pytest.fixture
def litellm(make_litellm_db: Callable[[str], LiteLLMDatabase]) -> LiteLLMDatabase:
    """A fresh LiteLLM database with every migration applied."""
    return make_litellm_db("all")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"
