"""Data cannot make a page enormous (issue 27): every breakdown shows its busiest names and
folds the rest into one row, keeps the highlighted user, cuts long names so that two
stay two; and the administrator's Overview over such data stays small and quick."""

from __future__ import annotations

import asyncio
import secrets
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from bench import cardinality_store
from bench.cardinality_bench import first_overview
from dashboard.auth import hash_password
from dashboard.strings import EN
from queries import pages
from queries.filters import Filters
from queries.runner import StoreReader
from settings.config import load_config
from settings.errors import ConfigError
from tests.browser import streamlit_server

TOP = 20  # the default top_names
# the breakdowns and the column of their names
NAMED = {
    "by_client": "client",
    "by_model": "model",
    "by_node": "node",
    "by_user": "user",
    "api_cost_by_client": "client",
    "api_cost_by_model": "model",
    "api_cost_by_node": "node",
    "api_cost_by_user": "user",
}
# the dimension each name column is of, in the views
DIMENSION = {"client": "client", "model": "model_group", "node": "node", "user": '"user"'}
CUT = 200 + 1 + 32  # shown_name: 200 characters, '…', 32 hex digits


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cardinality_store.build("wide", out=tmp_path_factory.mktemp("wide"))


@pytest.fixture(scope="module")
def long(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cardinality_store.build("long", rows=20_000, out=tmp_path_factory.mktemp("long"))


def distinct(reader: StoreReader, column: str) -> int:
    with reader.cursor(Filters()) as cur:
        row = cur.execute(f"SELECT count(DISTINCT {DIMENSION[column]}) FROM scoped_sums").fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("name", NAMED)
def test_a_breakdown_of_100k_names_shows_the_busiest_and_folds_the_rest(wide: Path, name: str) -> None:
    reader = StoreReader(wide)
    column = NAMED[name]
    frame = reader.run(name)
    total = int(reader.run("totals")["requests"].iloc[0])
    names = distinct(reader, column)
    assert len(frame) <= TOP + 1
    assert int(frame["requests"].sum()) == total == cardinality_store.ROWS  # nothing lost
    folded = frame[frame["folded"].notna()]
    if names > TOP:
        assert len(folded) == 1 and folded[column].isna().all()
        assert int(folded["folded"].iloc[0]) == names - TOP
        assert frame[column].notna().sum() == TOP
        assert frame.index[-1] == folded.index[0]  # the rest come last
    else:
        assert folded.empty and len(frame) == names


def test_the_breakdowns_over_100k_user_agents_and_models_are_many_names(wide: Path) -> None:
    """The store is what the other tests need: 100k names of each kind from one key."""
    reader = StoreReader(wide)
    assert distinct(reader, "client") > 100_000 and distinct(reader, "model") > 100_000


def test_a_highlighted_user_beyond_the_top_is_kept(wide: Path) -> None:
    reader = StoreReader(wide)
    everyone = reader.run("by_user", top_names=10_000)
    last = str(everyone["user"].iloc[-1])  # the one who spent least
    users = reader.run("by_user", top_names=3, highlight=last)
    assert list(users["user"].iloc[:3]) == list(everyone["user"].iloc[:3])
    assert last in set(users["user"])
    assert len(users) == 5 and int(users["folded"].iloc[-1]) == len(everyone) - 4
    assert int(users["requests"].sum()) == cardinality_store.ROWS
    grid = reader.run("user_client_matrix", grid_names=2, highlight=last)
    assert set(grid["user"].dropna()) == {*everyone["user"].iloc[:2], last}
    assert grid["client"].nunique(dropna=False) <= 3
    assert int(grid["requests"].sum()) == cardinality_store.ROWS
    assert len(grid) <= 4 * 3


def test_the_user_client_grid_is_bounded_both_ways(wide: Path) -> None:
    reader = StoreReader(wide)
    grid = reader.run("user_client_matrix")
    assert grid["user"].nunique(dropna=False) <= 12 + 1 and grid["client"].nunique(dropna=False) <= 12 + 1
    assert int(grid["requests"].sum()) == cardinality_store.ROWS
    other_clients = grid["clients_folded"].dropna().unique()
    assert list(other_clients) == [distinct(reader, "client") - 12]


def test_the_filters_offer_the_busiest_names_only(wide: Path) -> None:
    choices = StoreReader(wide).run("dimensions")
    assert choices.groupby("dimension").size().max() <= 100
    assert StoreReader(wide).run("dimensions", filter_names=5).groupby("dimension").size().max() <= 5


def test_the_highlighted_users_part_is_folded_as_the_page_is(wide: Path) -> None:
    reader = StoreReader(wide)
    page = reader.run("by_client")
    shown = page.loc[page["folded"].isna(), "client"].tolist()
    theirs = reader.run("by_client", Filters(users=(cardinality_store.WIDE_USER,)), shown=shown)
    assert set(theirs["client"].dropna()) <= set(shown)
    assert len(theirs) <= TOP + 1
    assert int(theirs["requests"].sum()) == cardinality_store.ROWS // 2


def test_a_students_peers_are_bounded_and_they_always_show(wide: Path) -> None:
    reader = StoreReader(wide)
    peers = reader.run("peers", own_keys=[cardinality_store.WIDE_KEY], named=True, by="requests", top_names=3)
    assert len(peers) == 1 + 3 + 1
    assert bool(peers["is_you"].iloc[0]) and peers["user"].iloc[0] == "You"
    assert peers["folded"].iloc[-1] > 0


@pytest.mark.parametrize(
    ("name", "column"),
    [
        *((name, column) for name, column in NAMED.items() if column != "node"),  # the lab names nodes
        ("user_client_matrix", "user"),
        ("user_client_matrix", "client"),
    ],
)
def test_two_names_of_a_megabyte_with_the_same_beginning_stay_two_and_are_cut(
    long: Path, name: str, column: str
) -> None:
    everyone: dict[str, Any] = {"grid_names" if name == "user_client_matrix" else "top_names": 10_000}
    frame = StoreReader(long).run(name, **everyone)
    names = frame[column].dropna().astype(str)
    cut = names[names.str.len() > 200]
    assert len(cut.unique()) == 2, list(cut.str.len())
    assert (cut.str.len() == CUT).all()
    assert all(text.startswith("x" * 200 + "…") for text in cut)


def test_a_cut_name_filters_and_highlights_as_the_whole_name_does(long: Path) -> None:
    """A filter or highlight picked on the page holds the name as shown: it still selects
    that one name, never the other with the same beginning."""
    reader = StoreReader(long)
    shown = reader.run("dimensions", filter_names=10_000)
    cut = shown.loc[(shown["dimension"] == "model") & (shown["value"].str.len() == CUT), "value"].tolist()
    assert len(cut) == 2
    one = reader.run("totals", Filters(models=(cut[0],)))
    assert int(one["requests"].iloc[0]) == 1
    user = shown.loc[(shown["dimension"] == "user") & (shown["value"].str.len() == CUT), "value"].iloc[0]
    users = reader.run("by_user", top_names=1, highlight=user)
    assert user in set(users["user"]) and len(users) == 3


def test_the_filters_offer_long_names_cut(long: Path) -> None:
    values = StoreReader(long).run("dimensions", filter_names=10_000)["value"].astype(str)
    assert values.str.len().max() == CUT
    assert (values.str.len() == CUT).sum() == 2 * 3  # user, model, client


def test_the_nodes_pages_rows_per_model_are_the_busiest_models_cut(wide: Path, long: Path) -> None:
    busiest = StoreReader(wide).run("by_model", top_names=TOP)["model"].dropna()
    data = pages.nodes(StoreReader(wide), Filters())
    for name in pages.PER_MODEL:
        models = set(data[name]["model"].dropna())
        assert models <= set(busiest), name
        assert 0 < len(models) <= TOP, name
    data = pages.nodes(StoreReader(long), Filters(), top_names=10_000)
    for name in pages.PER_MODEL:
        names = data[name]["model"].dropna().astype(str)
        assert names.str.len().max() == CUT, name
        assert names[names.str.len() == CUT].nunique() == 2, name


@pytest.mark.parametrize("kind", ["wide", "long"])
def test_the_administrators_first_overview_stays_small(
    kind: str, wide: Path, long: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real server, a browser's session: the Overview ends within a minute, and no
    message it sends is larger than a quarter of a megabyte (ordinary data: ~20 KB)."""
    password = secrets.token_urlsafe(12)
    env = {
        "USAGE_STORE": str(wide if kind == "wide" else long),
        "USAGE_TIMEZONE": "Asia/Seoul",
        "USAGE_ADMIN_PASSWORD_HASH": hash_password(password),
    }
    with streamlit_server(env) as url:
        session, seconds = asyncio.run(first_overview(url, password, timeout_s=60))
    assert seconds is not None, "the Overview did not end within 60 s"
    assert not session.errors
    assert session.page.has("button", label=EN["signout.button"])
    assert len(session.page.of_kind("plotly_chart")) >= 7
    assert session.largest < 256 * 1024, session.largest
    assert session.sent < 2 * 2**20, session.sent
    assert not pd.isna(seconds)


def test_the_name_limits_come_from_the_configuration(tmp_path: Path) -> None:
    path = tmp_path / "usage.toml"
    path.write_text("[dashboard]\ntop_names = 5\ngrid_names = 3\nfilter_names = 50\n", encoding="utf-8")
    settings = load_config(path, env={}).dashboard
    assert (settings.top_names, settings.grid_names, settings.filter_names) == (5, 3, 50)
    path.write_text("", encoding="utf-8")
    settings = load_config(path, env={}).dashboard
    assert (settings.top_names, settings.grid_names, settings.filter_names) == (20, 12, 100)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[dashboard]\ntop_names = 0\n", "dashboard.top_names must be a whole number from 1 to 10000, not 0"),
        ("[dashboard]\ngrid_names = 2.5\n", "dashboard.grid_names must be a whole number"),
        ("[dashboard]\nfilter_names = true\n", "dashboard.filter_names must be a whole number"),
        ("[dashboard]\ntop_names = 100000\n", "from 1 to 10000, not 100000"),
    ],
)
def test_a_wrong_name_limit_says_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "usage.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        load_config(path, env={})
