"""What the requests would have cost at API prices (issue 17, part 2): the price book's
checks, and the cost over a store whose every number is known, with cached and reasoning
tokens, a price change in the middle of the range and a model without a price.

One module because it is one feature's tests over one store whose prices are known.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from contract.store import DEMO_FILE
from dashboard import demo_mode
from dashboard import format as fmt
from dashboard.auth import Identity
from dashboard.untrusted import markdown
from etl import simulate
from etl.run import ingest_rows
from queries import pages
from queries.filters import Filters
from queries.runner import StoreReader
from queries.scope import ScopedReader
from settings.config import Config, load_config
from settings.errors import ConfigError
from settings.price_book import Price, load_price_book
from tests import known_store
from tests.test_rollup import _raw_twin, assert_same

UTC = dt.UTC
REPO = Path(__file__).resolve().parent.parent
VLLM, LLAMACPP = "vllm_streamed_reasoning_cached", "llamacpp_non_streamed"


# gpt-oss-120b's price doubles on December 10 (UTC); qwen3-coder-30b has one price;
# mystery-model none
def price(model: str, usd: tuple[float, float, float], **kw: Any) -> Price:
    """`usd`: input, cached input, output per million tokens."""
    reference = {
        "gpt-oss-120b": "openai/gpt-oss-120b",
        "qwen3-coder-30b": "qwen/qwen3-coder-30b-a3b-instruct",
    }
    return Price(model, reference[model], *usd, **{"taken": dt.date(2026, 12, 1)} | kw)


CHANGE = dt.date(2026, 12, 10)
PRICES = (
    price("gpt-oss-120b", (0.10, 0.05, 0.50), valid_until=CHANGE),
    price("gpt-oss-120b", (0.20, 0.10, 1.00), taken=CHANGE, valid_from=CHANGE),
    price("qwen3-coder-30b", (0.06, 0.03, 0.25)),
)


def request(kind: str, user: str, day: int, usage: tuple[int, int, int, int], **kw: Any) -> dict[str, Any]:
    """A request of `user` on December `day`, 10:00 UTC; usage: prompt, cached, completion, reasoning."""
    start = dt.datetime(2026, 12, day, 10, 0)
    return known_store.request(
        kind, user, start, request_id=f"{user}-{day}", usage=usage, duration_ms=1000, **kw
    )


ROWS = [
    # old price: (800 * 0.10 + 200 * 0.05 + 300 * 0.50) / 1e6 (the 100 reasoning tokens are output)
    request(VLLM, "alice", 8, (1000, 200, 300, 100), spend=0.001),
    # new price: (1000 * 0.20 + 1000 * 0.10 + 400 * 1.00) / 1e6 (150 of the 400 are reasoning)
    request(VLLM, "alice", 12, (2000, 1000, 400, 150), spend=0.002),
    # (2000 * 0.06 + 1000 * 0.03 + 500 * 0.25) / 1e6
    request(LLAMACPP, "bob", 9, (3000, 1000, 500, 0), spend=0.0005),
    # no price: not priced, never 0
    request(LLAMACPP, "bob", 11, (500, 0, 100, 0), spend=0.0001, model_group="mystery-model"),
    # a failure of a priced model: 0, as LiteLLM's spend
    request("failure_after_routing", "carol", 11, (20, 0, 0, 0)),
    # a failure before routing has no model, and costs nothing all the same: priced
    request("failure_before_routing", "dave", 11, (10, 0, 0, 0)),
    # a failure of the model without a price: not priced with it (it read $0.00, not "not priced")
    request("failure_after_routing", "erin", 11, (30, 0, 0, 0), model_group="mystery-model"),
]
ALICE_8, ALICE_12, BOB_9 = 240e-6, 700e-6, 275e-6
DECEMBER_8_TO_12 = Filters(
    start=dt.datetime(2026, 12, 8, tzinfo=UTC), end=dt.datetime(2026, 12, 13, tzinfo=UTC), tz="UTC"
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("api_cost") / "store"
    assert ingest_rows(Config(store=path), ROWS).rows_written == len(ROWS)
    return path


@pytest.fixture(scope="module")
def priced(store: Path) -> StoreReader:
    return StoreReader(store, prices=PRICES)


def one(df: pd.DataFrame) -> dict[str, Any]:
    assert len(df) == 1
    return dict(df.iloc[0])


@pytest.mark.parametrize(
    "filters",
    [
        DECEMBER_8_TO_12,  # whole UTC days: their rollups
        # the whole month, whose rows are read per day: merged, the price change inside
        # it would be lost
        Filters(
            start=dt.datetime(2026, 12, 1, tzinfo=UTC), end=dt.datetime(2027, 1, 1, tzinfo=UTC), tz="UTC"
        ),
        # days covered in part: their single requests
        Filters(
            start=dt.datetime(2026, 12, 8, 5, tzinfo=UTC),
            end=dt.datetime(2026, 12, 12, 11, tzinfo=UTC),
            tz="Asia/Seoul",
        ),
    ],
    ids=["days", "month", "edges"],
)
def test_the_cost_at_api_prices_with_a_price_change_in_the_range(
    priced: StoreReader, filters: Filters
) -> None:
    t = one(priced.run("api_cost_totals", filters))
    assert t["api_cost_usd"] == pytest.approx(ALICE_8 + ALICE_12 + BOB_9, rel=1e-12)
    assert (t["requests"], t["priced_requests"], t["unpriced_requests"]) == (7, 5, 2)
    assert (t["priced_tokens"], t["unpriced_tokens"]) == (1300 + 2400 + 3500 + 20 + 10, 600 + 30)
    assert t["spend_usd"] == pytest.approx(0.0036, rel=1e-12)
    assert t["priced_spend_usd"] == pytest.approx(0.0035, rel=1e-12)  # like with like: not mystery-model's
    assert t["difference_usd"] == pytest.approx(0.001215 - 0.0035, rel=1e-12)
    assert (t["price_entries"], t["prices_taken"]) == (3, pd.Timestamp(CHANGE))
    assert_same(priced.run("api_cost_by_model", filters), _twin(priced, "api_cost_by_model", filters), "twin")


def _twin(reader: StoreReader, name: str, filters: Filters) -> pd.DataFrame:
    """The same query over single requests of every day file (tests/test_rollup.py)."""
    return _raw_twin(reader, name, reader.resolve(filters))


def test_per_user_model_node_and_client(priced: StoreReader) -> None:
    by_user = priced.run("api_cost_by_user", DECEMBER_8_TO_12).set_index("user")
    assert list(by_user.index) == ["alice", "bob", "carol", "dave", "erin"]
    assert by_user.loc["alice", "api_cost_usd"] == pytest.approx(ALICE_8 + ALICE_12, rel=1e-12)
    assert by_user.loc["bob", "api_cost_usd"] == pytest.approx(BOB_9, rel=1e-12)
    assert by_user.loc["carol", "api_cost_usd"] == 0  # a failure: priced, and free
    assert by_user.loc["dave", "api_cost_usd"] == 0  # the same before routing, with no model
    assert by_user["api_cost_usd"].isna()["erin"]  # her failure was of the unpriced model
    assert list(by_user["requests"]) == [2, 2, 1, 1, 1]
    assert list(by_user["priced_requests"]) == [2, 1, 1, 1, 0]
    assert list(by_user["unpriced_requests"]) == [0, 1, 0, 0, 1]

    by_model = priced.run("api_cost_by_model", DECEMBER_8_TO_12).set_index("model")
    assert list(by_model.index) == ["gpt-oss-120b", "mystery-model", "qwen3-coder-30b", "unknown-model"]
    assert list(by_model["reference"].fillna("-")) == [
        "openai/gpt-oss-120b",
        "-",
        "qwen/qwen3-coder-30b-a3b-instruct",
        "-",
    ]
    assert by_model.loc["gpt-oss-120b", "api_cost_usd"] == pytest.approx(ALICE_8 + ALICE_12, rel=1e-12)
    assert by_model.loc["qwen3-coder-30b", "api_cost_usd"] == pytest.approx(BOB_9, rel=1e-12)
    assert list(by_model["api_cost_usd"].isna()) == [False, True, False, False]  # not priced: not 0
    assert list(by_model["unpriced_requests"]) == [0, 2, 0, 0]
    taken = by_model["taken"].dt.strftime("%Y-%m-%d").fillna("-")
    assert list(taken) == ["2026-12-10", "-", "2026-12-01", "-"]  # the newest prices used

    by_node = priced.run("api_cost_by_node", DECEMBER_8_TO_12).set_index("node")
    assert by_node.loc["ws-blackwell:8000", "api_cost_usd"] == pytest.approx(ALICE_8 + ALICE_12, rel=1e-12)
    assert by_node.loc["l40-a:8080", "api_cost_usd"] == pytest.approx(BOB_9, rel=1e-12)
    assert by_node.loc["l40-a:8080", "unpriced_requests"] == 1

    by_client = priced.run("api_cost_by_client", DECEMBER_8_TO_12)
    assert by_client["api_cost_usd"].sum() == pytest.approx(ALICE_8 + ALICE_12 + BOB_9, rel=1e-12)
    assert by_client["requests"].sum() == 7

    unpriced = priced.run("unpriced_models", DECEMBER_8_TO_12)
    assert unpriced.to_dict("records") == [{"model": "mystery-model", "requests": 2, "total_tokens": 630}]


def test_each_day_at_its_own_price(priced: StoreReader) -> None:
    """From the change on: only the new price; before it: only the old one."""
    after = Filters(
        start=dt.datetime(2026, 12, 10, tzinfo=UTC), end=dt.datetime(2026, 12, 13, tzinfo=UTC), tz="UTC"
    )
    before = Filters(
        start=dt.datetime(2026, 12, 1, tzinfo=UTC), end=dt.datetime(2026, 12, 10, tzinfo=UTC), tz="UTC"
    )
    assert one(priced.run("api_cost_totals", after))["api_cost_usd"] == pytest.approx(ALICE_12, rel=1e-12)
    assert one(priced.run("api_cost_totals", before))["api_cost_usd"] == pytest.approx(
        ALICE_8 + BOB_9, rel=1e-12
    )


def test_the_page_gets_every_result_set(priced: StoreReader) -> None:
    results = pages.api_cost(priced, DECEMBER_8_TO_12)
    assert set(results) == set(pages.API_COST_QUERIES)
    assert one(results["totals"])["api_cost_usd"] == pytest.approx(ALICE_8 + ALICE_12 + BOB_9, rel=1e-12)


def test_without_a_price_book_nothing_is_priced_and_the_page_gets_nothing(store: Path) -> None:
    plain = StoreReader(store)
    assert pages.api_cost(plain, DECEMBER_8_TO_12) == {}
    t = one(plain.run("api_cost_totals", DECEMBER_8_TO_12))
    assert (t["price_entries"], t["priced_requests"], t["unpriced_requests"]) == (0, 0, 7)
    assert pd.isna(t["api_cost_usd"]) and pd.isna(t["difference_usd"])
    assert plain.run("api_cost_by_user", DECEMBER_8_TO_12)["api_cost_usd"].isna().all()


def test_a_student_sees_only_their_own_cost(priced: StoreReader) -> None:
    alice = ScopedReader(priced, (known_store.key_of("alice"),))
    results = pages.api_cost(alice, replace(DECEMBER_8_TO_12, users=("bob",)))
    assert one(results["totals"])["requests"] == 0  # bob is not hers to see
    results = pages.api_cost(alice, DECEMBER_8_TO_12)
    t = one(results["totals"])
    assert t["api_cost_usd"] == pytest.approx(ALICE_8 + ALICE_12, rel=1e-12)
    assert (t["requests"], t["unpriced_requests"]) == (2, 0)
    assert list(results["by_user"]["user"]) == ["alice"]
    assert results["unpriced"].empty


# --- the price book's file and its checks


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


ENTRY = """
[[price]]
model = "gpt-oss-120b"
reference = "openai/gpt-oss-120b"
input = 0.1
cached_input = 0.05
output = 0.5
taken = 2026-12-01
"""


def test_the_configuration_names_the_price_book_relative_to_itself(tmp_path: Path) -> None:
    write(tmp_path / "prices.toml", ENTRY + 'from = "2026-12-10"\n')
    config = load_config(write(tmp_path / "usage.toml", 'price_book = "prices.toml"\n'), env={})
    assert config.price_book == tmp_path / "prices.toml"
    assert config.prices == (price("gpt-oss-120b", (0.1, 0.05, 0.5), valid_from=CHANGE),)
    other = write(tmp_path / "other.toml", "")
    overridden = load_config(tmp_path / "usage.toml", env={"USAGE_PRICE_BOOK": str(other)})
    assert (overridden.price_book, overridden.prices) == (other, ())
    assert load_config(env={}).prices == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            ENTRY.replace('reference = "openai/gpt-oss-120b"\n', ""),
            r"price\[0\] \(gpt-oss-120b\): missing reference",
        ),
        (ENTRY + "currency = 'EUR'\n", r"price\[0\] \(gpt-oss-120b\): unknown key currency"),
        (ENTRY.replace("output = 0.5", "output = -0.5"), "output must be USD per million tokens, from 0"),
        (ENTRY.replace("input = 0.1", 'input = "0.1"'), "input must be USD per million tokens"),
        # an infinite or absurd price would make every total at API prices infinite
        (
            ENTRY.replace("input = 0.1", "input = inf"),
            r"\(gpt-oss-120b\): input must be .* to 10,000, not inf",
        ),
        (ENTRY.replace("output = 0.5", "output = 1e308"), r"\(gpt-oss-120b\): output must be .* not 1e\+308"),
        (ENTRY.replace("cached_input = 0.05", "cached_input = nan"), "cached_input must be USD"),
        (
            ENTRY.replace("output = 0.5", "output = 10_001"),
            "output must be USD per million tokens, from 0 to",
        ),
        (ENTRY + "from = 2026-12-10\nuntil = 2026-12-10\n", r"from \(2026-12-10\) must be before until"),
        (ENTRY.replace("taken = 2026-12-01", "taken = 2026-12-01T10:00:00"), "taken must be a date"),
        (
            ENTRY + ENTRY.replace("taken", "from = 2026-12-10\ntaken"),
            "two prices of gpt-oss-120b hold on the same days",
        ),
        (
            ENTRY + "until = 2026-12-12\n" + ENTRY + "from = 2026-12-10\n",
            r"from the start until 2026-12-12 and from 2026-12-10 until the end",
        ),
        ("[price]\nmodel = 'x'\n", r"\[\[price\]\]"),
        ("prices = []\n", "unknown setting prices"),
        ("[[price\n", "is not valid TOML"),
    ],
)
def test_a_wrong_price_book_says_which_entry_and_what(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "prices.toml", text)
    with pytest.raises(ConfigError, match=message) as raised:
        load_price_book(path)
    assert str(path) in str(raised.value)


def test_a_missing_price_book_is_an_error_not_an_absent_feature(tmp_path: Path) -> None:
    config = write(tmp_path / "usage.toml", 'price_book = "nowhere.toml"\n')
    with pytest.raises(ConfigError, match=r"price book .*nowhere.toml does not exist"):
        load_config(config, env={})
    with pytest.raises(ConfigError, match="price_book must be the path"):
        load_config(write(tmp_path / "usage.toml", "price_book = 3\n"), env={})


def test_the_example_prices_the_demos_models_and_the_demo_shows_it(tmp_path: Path) -> None:
    example = load_price_book(REPO / "deploy" / "prices.example.toml")
    assert {p.model for p in example} == {d.model_group for d in simulate.DEPLOYMENTS}
    assert any(p.valid_from or p.valid_until for p in example)  # a price change, as documented
    demo_store = tmp_path / "demo"
    demo_store.mkdir()
    (demo_store / DEMO_FILE).write_text(json.dumps({"demo": True}), encoding="utf-8")
    assert demo_mode.prices(Config(), demo_store) == example
    assert demo_mode.prices(Config(), tmp_path) == ()  # a real store: only a configured price book
    configured = Config(prices=PRICES, price_book=tmp_path / "prices.toml")
    assert demo_mode.prices(configured, demo_store) == PRICES


PRICE_BOOK = """
[[price]]
model = "gpt-oss-120b"
reference = "openai/gpt-oss-120b"
input = 0.1
cached_input = 0.05
output = 0.5
taken = 2026-12-01
until = 2026-12-10

[[price]]
model = "gpt-oss-120b"
reference = "openai/gpt-oss-120b"
input = 0.2
cached_input = 0.1
output = 1.0
taken = 2026-12-10
from = 2026-12-10

[[price]]
model = "qwen3-coder-30b"
reference = "qwen/qwen3-coder-30b-a3b-instruct"
input = 0.06
cached_input = 0.03
output = 0.25
taken = 2026-12-01
"""


def open_app(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, identity: Identity, lang: str = "en"
) -> AppTest:
    """The page over December 8 to 12 (UTC days), with the price book above, or none."""
    monkeypatch.setenv("USAGE_STORE", str(store))
    monkeypatch.setenv("USAGE_TIMEZONE", "UTC")
    if identity.name != "no-prices":
        monkeypatch.setenv("USAGE_PRICE_BOOK", str(write(tmp_path / "prices.toml", PRICE_BOOK)))
    app = AppTest.from_file(str(REPO / "page.py"), default_timeout=60)
    app.session_state["identity"] = identity
    for key, value in {"lang": lang, "range": "custom", "from": "2026-12-08", "to": "2026-12-12"}.items():
        app.query_params[key] = value
    app.run()
    assert not app.exception, app.exception
    return app


def cost_tables(app: AppTest) -> dict[str, pd.DataFrame]:
    """The tables of the panel, by their first column's name."""
    frames = [getattr(d.value, "data", d.value) for d in app.dataframe]
    return {str(frame.columns[0]): frame for frame in frames}


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_overview_shows_the_cost_at_api_prices(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    app = open_app(store, tmp_path, monkeypatch, Identity(role="admin", name="admin"), lang)
    cards = {m.label: m.value for m in app.metric}
    labels = {
        "en": ("At API prices", "API prices against spend"),
        "ko": ("API 가격 기준", "비용 대비 API 가격"),
    }[lang]
    assert cards[labels[0]] == fmt.usd(ALICE_8 + ALICE_12 + BOB_9) == "$0.00121"
    # $0.001215 at API prices against $0.0035 of spend: a ratio, never a negative "saving"
    assert cards[labels[1]] == {"en": "0.35x", "ko": "0.35배"}[lang]
    warning = next(w.value for w in app.warning if "mystery-model" in w.value)
    assert {"en": "not counted above: 2.", "ko": "요청 2건은 모델 가격이 없어"}[lang] in warning
    models = cost_tables(app)["model"].set_index("model")
    assert models.loc["gpt-oss-120b", "api_cost_usd"] == pytest.approx(ALICE_8 + ALICE_12)
    unpriced = models["api_cost_usd"].isna()
    assert [name for name in unpriced.index if unpriced[name]] == ["mystery-model"]  # "not priced", not $0
    users = cost_tables(app)["user"].set_index("user")
    assert (
        users.loc["bob", "api_cost_usd"] == pytest.approx(BOB_9)
        and users.loc["bob", "unpriced_requests"] == 1
    )
    assert set(cost_tables(app)) >= {"model", "client", "user", "node"}


def test_a_student_sees_their_own_cost_only(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob = known_store.key_of("bob")
    app = open_app(store, tmp_path, monkeypatch, Identity(role="student", name="bob", keys=(bob,), key=bob))
    cards = {m.label: m.value for m in app.metric}
    assert cards["At API prices"] == fmt.usd(BOB_9)
    tables = cost_tables(app)
    assert "user" not in tables and "node" not in tables  # by model and by client only
    assert set(tables["model"]["model"]) == {"qwen3-coder-30b", "mystery-model"}  # not alice's


def test_without_a_price_book_the_page_has_no_such_panel(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = open_app(store, tmp_path, monkeypatch, Identity(role="admin", name="no-prices"))
    assert "At API prices" not in {m.label for m in app.metric}
    assert not [m for m in app.markdown if "At API prices" in str(m.value)]


def test_an_unpriced_models_name_is_text_not_markdown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Model names come from the proxy's configuration and the clients' requests: the
    'not priced' notice shows the name as written, never as a link or emphasis. (A range
    with no priced request has no date of prices: the page showed an error.)"""
    hostile = "[free credits](https://evil.example) **now** $x$"
    store = tmp_path / "store"
    ingest_rows(Config(store=store), [request(LLAMACPP, "bob", 9, (100, 0, 10, 0), model_group=hostile)])
    app = open_app(store, tmp_path, monkeypatch, Identity(role="admin", name="admin"))
    warning = next(w.value for w in app.warning if "not counted above" in w.value)
    assert f"{markdown(hostile)} (1)" in warning and "[free credits](" not in warning
