"""End users are never merged into a person: the OpenAI `user` field a key holder sets
(`end_user`) is kept apart from user ids and key aliases on every path a page reads
(rollups of whole days, single requests of partial days), in bars, filters and the
highlight's data."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import pytest

from etl.run import ingest_rows
from queries.filters import Filters
from queries.identity import END_USER
from queries.runner import StoreReader
from settings.config import Config
from tests import known_store
from tests.litellm_db import spend_log

UTC = dt.UTC
DAY = dt.datetime(2026, 11, 10, tzinfo=UTC)
WHOLE_DAY = Filters(start=DAY, end=DAY + dt.timedelta(days=1), tz="UTC")  # rollups
PART_OF_DAY = Filters(start=DAY, end=DAY + dt.timedelta(hours=20), tz="UTC")  # single requests
UNOWNED_KEY = hashlib.sha256(b"sk-shared-eval").hexdigest()


def unowned(end_user: str, hour: int) -> dict[str, Any]:
    """A key with neither owner nor alias, whose client says `user=<end_user>`."""
    return spend_log(
        "key_without_owner",
        start=(DAY + dt.timedelta(hours=hour)).replace(tzinfo=None),
        end_user=end_user,
        api_key=UNOWNED_KEY,
        spend=5.0,
        metadata={"user_api_key_alias": None, "user_api_key": UNOWNED_KEY},
    )


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> StoreReader:
    rows = [
        known_store.request(
            "llamacpp_non_streamed",
            "alice",
            (DAY + dt.timedelta(hours=h)).replace(tzinfo=None),
            spend=4.5,
            duration_ms=1000,
        )
        for h in range(8)
    ]
    rows += [unowned("alice", 10 + h) for h in range(4)]  # claims to be alice
    rows += [unowned(f"key:{known_store.key_of('alice')[:8]}", 15)]  # claims to be alice's key label
    store = tmp_path_factory.mktemp("identity") / "store"
    ingest_rows(Config(store=store), rows)
    return StoreReader(store, share_results=False)


@pytest.mark.parametrize("filters", [WHOLE_DAY, PART_OF_DAY], ids=["rollups", "requests"])
def test_an_end_user_named_like_a_person_is_not_that_person(reader: StoreReader, filters: Filters) -> None:
    users = reader.run("by_user", filters).set_index("user")
    assert users.loc["alice", "requests"] == 8 and users.loc["alice", "spend_usd"] == pytest.approx(36.0)
    assert users.loc[f"{END_USER}alice", "requests"] == 4
    assert users.loc[f"{END_USER}alice", "spend_usd"] == pytest.approx(20.0)
    label = f"key:{known_store.key_of('alice')[:8]}"
    assert label not in users.index and users.loc[f"{END_USER}{label}", "requests"] == 1


@pytest.mark.parametrize("filters", [WHOLE_DAY, PART_OF_DAY], ids=["rollups", "requests"])
def test_filtering_on_a_person_leaves_out_end_users_of_the_same_name(
    reader: StoreReader, filters: Filters
) -> None:
    alice = Filters(start=filters.start, end=filters.end, tz="UTC", users=("alice",))
    [totals] = reader.run("totals", alice).to_dict("records")
    assert totals["requests"] == 8 and totals["spend_usd"] == pytest.approx(36.0)
    matrix = reader.run("user_client_matrix", filters)
    assert set(matrix["user"]) == {
        "alice",
        f"{END_USER}alice",
        f"{END_USER}key:{known_store.key_of('alice')[:8]}",
    }
    options = reader.run("dimensions", filters)
    assert set(options.loc[options["dimension"] == "user", "value"]) == set(matrix["user"])
