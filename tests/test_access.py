"""Who sees what: sign-in, a student's scope in every query and on the page, peers modes,
lock-out, and a key that never lingers anywhere."""

from __future__ import annotations

import datetime as dt
import logging
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from streamlit.testing.v1 import AppTest

from contract.store import KEYS_FILE, USERS_FILE, USERS_SCHEMA
from dashboard import auth, one_time_code, signin
from dashboard.strings import EN
from etl.load import write_snapshot
from etl.run import ingest_rows
from queries.filters import Filters
from queries.pages import OVERVIEW_QUERIES
from queries.runner import StoreReader, reader
from queries.scope import ScopedReader
from settings.config import Config
from state.db import DB_FILE, STATE_ENV, STATE_URL_ENV
from tests import known_store, storeview
from tests.known_store import KST_NOV_21

APP = str(Path(__file__).resolve().parent.parent / "page.py")
PASSWORD = "correct horse battery staple"
REFUSED = "The lab's LiteLLM does not accept this key. If it should, ask the lab's administrator."
SEOUL_NOV_21 = {"range": "custom", "from": "2026-11-21", "to": "2026-11-21"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return known_store.build(tmp_path_factory.mktemp("access") / "store")


@pytest.fixture(scope="module")
def password_hash() -> str:
    return auth.hash_password(PASSWORD)


@pytest.fixture(autouse=True)
def fresh_budgets() -> None:
    """The sign-in budgets are process-wide: start each test with none spent."""
    signin.gate().reset()


def app(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str, peers: str = "anonymous", **params: Any
) -> AppTest:
    config = store.parent / f"usage-{peers}.toml"
    config.write_text(f'[dashboard]\npeers = "{peers}"\ntimezone = "Asia/Seoul"\n', encoding="utf-8")
    monkeypatch.setenv("USAGE_STORE", str(store))
    monkeypatch.setenv("USAGE_CONFIG", str(config))
    monkeypatch.setenv("USAGE_ADMIN_PASSWORD_HASH", password_hash)
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def sign_in(at: AppTest, *, key: str | None = None, password: str | None = None) -> AppTest:
    field, button = (0, 0) if key is not None else (1, 1)
    at.text_input[field].input(key if key is not None else password or "")
    submit: Any = at.get("form_submit_button")[button]
    submit.click().run()
    assert not at.exception, at.exception
    return at


def everything(at: AppTest) -> str:
    """All the page shows and all the session holds, as text."""
    state = at.session_state._state._state
    return (
        repr(at._tree)
        + repr(state._old_state)
        + repr(state._new_widget_state)
        + repr(state._new_session_state)
    )


def test_nothing_is_shown_before_signing_in(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    at = app(store, monkeypatch, password_hash, **SEOUL_NOV_21)
    assert [t.value for t in at.title] == ["Sign in"]
    assert not at.metric and not at.get("plotly_chart")
    assert "alice" not in repr(at._tree)


def test_an_administrator_signs_in_with_the_right_password_only(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    at = sign_in(app(store, monkeypatch, password_hash, **SEOUL_NOV_21), password="wrong password")
    assert "Wrong password." in [e.value for e in at.error]
    assert not at.metric
    sign_in(at, password=PASSWORD)
    assert {m.label: m.value for m in at.metric}["Requests"] == "3"  # the whole lab
    assert len(at.get("plotly_chart")) == 8
    assert any("Signed in as **admin** (administrator)" in c.value for c in at.sidebar.caption)


def test_a_student_signs_in_with_their_key_and_sees_their_budget(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    at = sign_in(app(store, monkeypatch, password_hash, **SEOUL_NOV_21), key="sk-alice")
    cards = {m.label: m.value for m in at.metric}
    assert (cards["Requests"], cards["Spend"], cards["Tokens"]) == ("1", "$0.02", "2,400")  # b1 only
    bars = [p.proto.text for p in at.get("progress")]
    assert bars == [
        "alice-laptop: $3.25 of $10.00 used (32.5 %), $6.75 left",
        "alice-jupyter: $0.50 spent, no budget set",
        "Your personal budget across keys: $3.75 of $40.00",
    ]
    assert any("limits: TPM 20,000 · RPM 60" in c.value for c in at.caption)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("sk-mallory", REFUSED),
        ("sk-dave", REFUSED),  # blocked
        ("sk-carol", REFUSED),  # expired
        ("not-a-key", "That is not a LiteLLM key: they start with sk-."),
    ],
)
def test_unknown_blocked_and_expired_keys_are_refused_alike(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str, key: str, message: str
) -> None:
    """The refusal must not tell a guesser that a key exists (blocked or expired)."""
    at = sign_in(app(store, monkeypatch, password_hash), key=key)
    assert [e.value for e in at.error] == [message]
    assert not at.metric and "identity" not in at.session_state


def test_every_query_of_a_student_returns_only_their_rows(store: Path) -> None:
    """Compared with the store itself: alice's keys' rows, and nothing else, in every
    result set, whatever filters ask (here: another user by name)."""
    alice_keys = (known_store.key_of("alice"), known_store.key_of("alice-2"))
    rows = storeview.requests(store)
    mine = rows.filter(pc.is_in(rows["api_key_hash"], value_set=pa.array(alice_keys)))
    start, end = KST_NOV_21.start, KST_NOV_21.end
    assert start is not None and end is not None
    in_day = [r for r in mine.to_pylist() if start <= r["start_time"] < end]
    reader = ScopedReader(StoreReader(store), alice_keys)
    from dataclasses import replace

    asking_for_bob = replace(KST_NOV_21, users=("bob",))
    for name in {*OVERVIEW_QUERIES.values(), "by_user"}:
        assert reader.run(name, asking_for_bob)["requests"].sum() == 0, name  # bob is not theirs to see
        result = reader.run(name, KST_NOV_21)
        assert result["requests"].sum() == len(in_day), name
        if "user" in result:
            assert set(result["user"]) == {"alice"}, name
    assert reader.run("store_status").iloc[0]["requests"] == mine.num_rows
    assert set(reader.run("dimensions").query("dimension == 'user'")["value"]) == {"alice"}
    assert set(reader.run("budgets")["api_key_hash"]) == set(alice_keys)
    assert reader.run("key_lookup", key_hash=known_store.key_of("bob")).empty
    assert reader.run("student_keys", user_id="bob").empty


def test_a_crafted_link_cannot_show_another_student(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    at = app(store, monkeypatch, password_hash, **SEOUL_NOV_21, user="bob", highlight="bob")
    sign_in(at, key="sk-alice")
    shown = repr(at._tree)
    assert "bob" not in shown.replace("'bob' in the data", "").replace("highlight='bob'", "")
    assert {m.label: m.value for m in at.metric}["Requests"] == "1"


@pytest.mark.parametrize(
    ("peers", "labels"),
    [("anonymous", ["Student A", "You"]), ("named", ["bob", "You"]), ("hidden", None)],
)
def test_peers_modes(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str, peers: str, labels: list[str] | None
) -> None:
    at = sign_in(app(store, monkeypatch, password_hash, peers, **SEOUL_NOV_21), key="sk-alice")
    charts = {c.proto.id.rsplit("-", 1)[-1]: c for c in at.get("plotly_chart")}
    if labels is None:
        assert "peers_chart" not in charts
        assert "bob" not in repr(at._tree) and "Student A" not in repr(at._tree)
        return
    import json

    bars = json.loads(charts["peers_chart"].proto.spec)["data"][0]
    assert sorted(bars["y"]) == sorted(labels)
    if peers == "anonymous":
        assert "bob" not in repr(at._tree)


def test_repeated_failures_lock_the_session_out(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    at = app(store, monkeypatch, password_hash)
    for _ in range(3):
        sign_in(at, password="guess")
    assert any("Too many failed attempts" in w.value for w in at.warning)
    sign_in(at, password=PASSWORD)  # refused while waiting, however right
    assert not at.metric and "identity" not in at.session_state


def test_guesses_from_fresh_sessions_delay_the_right_password_by_seconds_never_the_one_time_code(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str, tmp_path: Path
) -> None:
    """A new session per guess escapes the per-session lock, not the gate: after ten failed
    passwords at once the next password waits for the pace of scrypt checks (seconds, not
    minutes); a one-time code gets in at once and only once, and the students' form stays
    open."""
    now = [0.0]
    door = auth.SignInGate(clock=lambda: now[0])
    monkeypatch.setattr(signin, "gate", lambda: door)
    monkeypatch.setenv(one_time_code.STATE_ENV, str(tmp_path))
    for _ in range(10):
        assert [e.value for e in sign_in(app(store, monkeypatch, password_hash), password="guess").error] == [
            "Wrong password."
        ]
    newcomer = sign_in(app(store, monkeypatch, password_hash), password=PASSWORD)
    assert "identity" not in newcomer.session_state and not newcomer.error
    [wait] = [w.value for w in newcomer.warning if "Too many failed attempts" in w.value]
    assert int(wait.split("try again in ")[1].split(" s")[0]) == 6
    code = one_time_code.issue(tmp_path)
    sign_in(newcomer, password=code)
    assert newcomer.session_state["identity"].role == "admin" and newcomer.metric
    again = sign_in(app(store, monkeypatch, password_hash), password=code)
    assert "identity" not in again.session_state  # used up
    student = sign_in(app(store, monkeypatch, password_hash), key="sk-alice")
    assert student.metric  # key guesses and password guesses have their own bounds
    now[0] += 6
    professor = sign_in(app(store, monkeypatch, password_hash), password=PASSWORD)
    assert professor.session_state["identity"].role == "admin"


def test_a_key_blocked_after_sign_in_ends_the_session_at_the_next_store_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    own = known_store.build(tmp_path / "store")
    at = sign_in(app(own, monkeypatch, password_hash, **SEOUL_NOV_21), key="sk-alice")
    assert at.metric
    keys = known_store.keys_table()
    blocked = pc.equal(keys["api_key_hash"], known_store.key_of("alice"))
    write_snapshot(
        own / KEYS_FILE,
        keys.set_column(keys.schema.get_field_index("blocked"), "blocked", pc.or_(keys["blocked"], blocked)),
    )
    shown = reader(own, "Asia/Seoul")  # the app's own reader: wait until it has the new version
    before, deadline = shown.version(), time.monotonic() + 30
    while shown.version() == before and time.monotonic() < deadline:
        time.sleep(0.2)
    at.run()
    assert not at.metric and "identity" not in at.session_state
    assert [w.value for w in at.warning] == [
        "You were signed out: the lab's LiteLLM no longer accepts the key you signed in with."
    ]


def test_the_key_lingers_nowhere(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    at = app(store, monkeypatch, password_hash, **SEOUL_NOV_21)
    sign_in(at, key="sk-unknown-key-9f3a")
    sign_in(at, key="sk-alice")
    assert at.metric  # signed in
    for secret in ("sk-alice", "sk-unknown-key-9f3a"):
        assert secret not in everything(at)
        assert secret not in caplog.text
        assert all(secret not in str(v) for v in at.query_params.values())


def test_signing_out_forgets_the_session(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    at = sign_in(app(store, monkeypatch, password_hash), key="sk-alice")
    at.button(key="sign_out").click().run()
    assert [t.value for t in at.title] == ["Sign in"] and "identity" not in at.session_state


def test_a_request_labelled_with_a_classmates_name_does_not_merge_with_theirs(tmp_path: Path) -> None:
    """LiteLLM's `user` field is set by the client: alice sends one request labelled "bob"
    from a key without a user or alias. Her "You" bar is still hers alone, and bob's bar
    stays bob's, so no subtraction reveals which anonymous bar is bob's."""
    from etl.run import ingest_rows
    from settings.config import Config

    store = known_store.build(tmp_path / "store")
    at = dt.datetime(2026, 11, 21, 3, 0)
    kind = "vllm_streamed_reasoning_cached"
    spoof = known_store.request(kind, "alice", at, request_id="spoof", usage=(10, 0, 10, 0), duration_ms=500)
    spoof["metadata"] |= {"user_api_key_user_id": None, "user_api_key_alias": None}
    spoof |= {"user": "", "end_user": "bob"}
    ingest_rows(Config(store=store, nodes=known_store.NODES), [spoof])
    rows = storeview.requests(store).to_pylist()
    assert any(r["request_id"] == "spoof" and r["user"] == "bob" for r in rows)  # labelled bob
    alice_keys = (known_store.key_of("alice"), known_store.key_of("alice-2"))
    peers = ScopedReader(StoreReader(store), alice_keys).peers(Filters(tz="UTC"), named=True)
    you = peers[peers["is_you"]]
    alices = sum(r["api_key_hash"] in alice_keys for r in rows)
    assert len(you) == 1 and int(you["requests"].iloc[0]) == alices
    bobs = sum(r["user"] == "bob" and r["api_key_hash"] not in alice_keys for r in rows)
    assert bobs in set(peers.loc[~peers["is_you"], "requests"].astype(int))


def test_changing_the_administrators_password_ends_their_open_sessions(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    at = sign_in(app(store, monkeypatch, password_hash, **SEOUL_NOV_21), password=PASSWORD)
    assert at.metric
    at.run()
    assert at.metric  # the same hash: the session stands
    monkeypatch.setenv("USAGE_ADMIN_PASSWORD_HASH", auth.hash_password("a new password, long enough"))
    at.run()
    assert not at.metric and "identity" not in at.session_state
    assert [w.value for w in at.warning] == [
        "You were signed out: the administrators' password was changed, or your sign-in removed."
    ]


def test_a_key_close_to_its_budget_is_marked_alike_for_the_student_and_the_professor(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str
) -> None:
    """bob has used 92 % of his budget: orange on his own page, and in the budget table."""
    bob = sign_in(app(store, monkeypatch, password_hash, **SEOUL_NOV_21), key="sk-bob")
    assert ":orange-badge[at risk]" in [m.value for m in bob.markdown]
    alice = sign_in(app(store, monkeypatch, password_hash, **SEOUL_NOV_21), key="sk-alice")
    assert ":green-badge[within budget]" in [m.value for m in alice.markdown]
    assert not any("orange-badge" in m.value for m in alice.markdown)


def test_anonymous_peers_are_letters_and_rounded_shares_among_students_only(tmp_path: Path) -> None:
    """What a student may learn of the others (README and docs/security.md, "Who sees what"): no name, no
    amount, a share rounded to a whole percent; letters follow the measure the bars show;
    staff (LiteLLM's proxy_admin users, the professor) are not among the students."""
    store = known_store.build(tmp_path / "store")
    start = dt.datetime(2026, 11, 20, 15, 0)  # KST Nov 21, 00:00
    carol = {"duration_ms": 10, "spend": 5.0, "usage": (1, 0, 1, 0)}
    extra = [known_store.request("llamacpp_non_streamed", "carol", start, **carol) for _ in range(2)]
    ingest_rows(Config(store=store, nodes=known_store.NODES), extra)
    dave = ScopedReader(StoreReader(store), (known_store.key_of("dave"),))
    everyone = Filters(start=known_store.KST_NOV_21.start, end=known_store.KST_NOV_21.end, tz="UTC")
    by_requests = dave.peers(everyone, named=False, by="requests").set_index("user")
    by_spend = dave.peers(everyone, named=False, by="spend").set_index("user")
    assert by_requests[["requests", "total_tokens", "spend_usd"]].isna().all().all()  # no amounts
    assert all(round(s, 2) == s for s in by_requests["requests_share"])
    # carol made 2 requests ($10), alice 1 ($0.02), bob 2 ($0.0003): A, B, C follow the measure
    assert list(by_spend.index) == ["Student A", "Student B", "Student C"]
    assert by_spend.loc["Student A", "spend_share"] == pytest.approx(1.0, abs=0.01)
    assert by_requests.loc["Student C", "requests_share"] == pytest.approx(0.2)
    users = known_store.users_table().to_pylist()
    staff = dict.fromkeys(users[0]) | {"user_id": "carol", "user_role": "proxy_admin"}
    write_snapshot(store / USERS_FILE, pa.Table.from_pylist([*users, staff], schema=USERS_SCHEMA))
    fresh = ScopedReader(StoreReader(store), (known_store.key_of("dave"),))
    assert len(fresh.peers(everyone, named=False, by="spend")) == 2  # the professor is not a student


def test_without_its_state_database_the_dashboard_lets_nobody_in(
    store: Path, monkeypatch: pytest.MonkeyPatch, password_hash: str, tmp_path: Path
) -> None:
    """The sign-in budgets cannot be kept: the right password and a valid key are refused
    with a plain sentence, never let in unchecked; a session open before it failed ends."""
    at = sign_in(app(store, monkeypatch, password_hash), password=PASSWORD)
    assert at.session_state["identity"].role == "admin"
    damaged = tmp_path / "damaged"
    damaged.mkdir(mode=0o700)
    (damaged / DB_FILE).write_bytes(b"not a database " * 300)
    monkeypatch.setenv(STATE_URL_ENV, "")
    monkeypatch.setenv(STATE_ENV, str(damaged))
    at.run()
    assert "identity" not in at.session_state and not at.exception
    assert [e.value for e in at.error] == [EN["signin.state_down"]]
    for credentials in ({"password": PASSWORD}, {"key": "sk-alice"}):
        refused = sign_in(app(store, monkeypatch, password_hash), **credentials)
        assert "identity" not in refused.session_state and not refused.metric
        assert [e.value for e in refused.error] == [EN["signin.state_down"]]
