"""Names from the data and values from the URL are shown, never obeyed: no link, image or
markup the app did not write (Markdown on every page, Plotly in the charts), no formula in
a downloaded CSV, and no URL that crashes a page."""

from __future__ import annotations

import datetime as dt
import io
import random
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit import config as st_config
from streamlit.proto.Exception_pb2 import Exception as ExceptionProto
from streamlit.testing.v1 import AppTest

from contract.store import KEYS_FILE, KEYS_SCHEMA, RUNS_FILE
from dashboard import panels, untrusted
from dashboard.auth import Identity
from dashboard.strings import t
from dashboard.view_state import parse
from etl.load import write_snapshot
from etl.run import ingest_rows
from queries.filters import Filters
from queries.runner import StoreReader
from settings.config import Config, NodeRule
from tests.known_store import key_of, request
from tests.litellm_db import spend_log

REPO = Path(__file__).resolve().parent.parent
APP = str(REPO / "page.py")
LINKS = "[Sign in again](https://evil.example/phish) ![p](http://evil.example/x.png)"
HTML = '<a href="https://evil.example/a">a</a><img src="https://evil.example/i.png"><b>b</b><br>'
OTHER = "www.evil.example mail@evil.example $\\href{https://evil.example}{x}$ `c` *e* _f_ :red[g]"
USER = f"{LINKS} {HTML}"
KEY_ALIAS = f'=HYPERLINK("https://evil.example/k") 1. {OTHER} [k](https://evil.example/k)'
END_USER = f"- {LINKS} \u202eevil"
MODEL = f"# {HTML} [m](https://evil.example/m)"
CLIENT = "[c](evil.example)<b>client</b> <img src=evil.example> evil@evil.example"  # no "/" in a client
NODE = f"> {LINKS} <b>node</b>"
RUN_ERROR = f"cannot connect to https://evil.example/db {LINKS}"
DAY = {"range": "custom", "from": "2026-11-21", "to": "2026-11-21"}
START = dt.datetime(2026, 11, 21, 1, 0)
DAY_FILTERS = Filters(
    start=dt.datetime(2026, 11, 20, 15, tzinfo=dt.UTC), end=dt.datetime(2026, 11, 21, 15, tzinfo=dt.UTC)
)


def _rows() -> list[dict[str, Any]]:
    def one(kind: str, user: str | None, alias: str | None, **kw: Any) -> dict[str, Any]:
        row = request(kind, user or "x", START, duration_ms=1500, ttft_ms=300, **kw)
        row["metadata"]["user_api_key_user_id"] = user
        row["metadata"]["user_api_key_alias"] = alias
        row["user"] = user or ""
        return row

    common = {"user_agent": CLIENT + "/1.0", "model_group": MODEL, "api_base": "http://gpu-evil:8000/v1"}
    return [
        one("vllm_streamed_reasoning_cached", USER, "evil-laptop", request_id="u1", spend=0.5, **common),
        one("vllm_streamed_reasoning_cached", None, KEY_ALIAS, request_id="k1", spend=0.25, **common),
        # a key without owner or alias: its identity comes from end_user, set by the caller
        one("vllm_streamed_reasoning_cached", None, None, request_id="e1", end_user=END_USER, **common),
        one("failure_before_routing", USER, "evil-laptop", request_id="f1", model_group=MODEL),
        spend_log("vllm_streamed_reasoning_cached", start=START, request_id="bob1"),
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("untrusted") / "store")


def build(path: Path) -> Path:
    """A store whose user, key alias, end user, model, client and node names, a key's
    budget period and the last run's error are all written to be obeyed."""
    ingest_rows(Config(store=path, nodes=(NodeRule(NODE, api_bases=("gpu-evil:8000",)),)), _rows())
    snapshot = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    keys = [
        dict.fromkeys(KEYS_SCHEMA.names)
        | {
            "api_key_hash": key_of(USER),
            "key_name": "sk-...evil",
            "key_alias": KEY_ALIAS,
            "user_id": USER,
            "spend": 4.5,
            "max_budget": 5.0,
            "budget_duration": "[d](https://evil.example/d)",
            "budget_reset_at": dt.datetime(2026, 12, 15, tzinfo=dt.UTC),
            "blocked": False,
            "snapshot_at": snapshot,
        }
    ]
    write_snapshot(path / KEYS_FILE, pa.Table.from_pylist(keys, schema=KEYS_SCHEMA))
    runs = pq.read_table(path / RUNS_FILE).to_pylist()
    runs.append(runs[-1] | {"run_id": "failed", "status": "failed", "error": RUN_ERROR})
    pq.write_table(pa.Table.from_pylist(runs, schema=pq.read_schema(path / RUNS_FILE)), path / RUNS_FILE)
    return path


# --- what a Markdown text may not hold --------------------------------------------------------

# Fields of an element's message that Streamlit renders as Markdown (bodies, labels, help,
# captions, a progress bar's text); options and table cells are plain text.
MARKDOWN_FIELDS = {"body", "label", "help", "text", "title", "caption", "placeholder", "message"}
_UNESCAPED = re.compile(r"(?<!\\)(?:\\\\)*([\[\]<>`]|\$(?!\d))")
# GFM's autolinks, found in the text after the escapes are read (remark's own patterns)
_AUTOLINK = re.compile(r"https?://|www\.|[-.\w+]+@[-\w]+(?:\.[-\w]+)+", re.IGNORECASE | re.ASCII)


def live_markup(body: str) -> list[str]:
    """What in `body` Markdown would turn into a link, an image, HTML, code or math."""
    found = [m[1] for m in _UNESCAPED.finditer(body)]
    found += _AUTOLINK.findall(re.sub(r"\\(.)", r"\1", body))
    return found


def _texts(message: Any) -> Iterator[str]:
    for field, value in message.ListFields():
        if field.type == field.TYPE_MESSAGE:
            for item in [value] if hasattr(value, "ListFields") else value:
                yield from _texts(item)
        elif field.type == field.TYPE_STRING and field.name in MARKDOWN_FIELDS:
            yield from [value] if isinstance(value, str) else value


def markdown_texts(at: AppTest) -> list[str]:
    """Every Markdown text the page sends, from every element of the tree."""
    out: list[str] = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ListFields"):
            out.extend(_texts(proto))
        children = getattr(node, "children", None)
        for child in children.values() if isinstance(children, dict) else children or []:
            walk(child)

    walk(at._tree)
    return out


def unsafe(at: AppTest) -> list[tuple[str, list[str]]]:
    return [(body, found) for body in markdown_texts(at) if "evil" in body and (found := live_markup(body))]


def test_the_checker_sees_live_markup() -> None:
    for body in (LINKS, HTML, "see www.evil.example", "a@evil.example", "$x$", "`c`"):
        assert live_markup(body), body
    assert not live_markup("Spent $3.25 of $10.00 (32.5 %) on 2026-11-21, host:8000")


@pytest.mark.parametrize("text", [USER, KEY_ALIAS, END_USER, MODEL, CLIENT, NODE, RUN_ERROR, OTHER])
def test_a_name_in_a_text_is_inert_and_reads_the_same(text: str) -> None:
    shown = t("highlight.active", who=text)
    assert not live_markup(shown), shown
    read = re.sub(r"\\(.)", r"\1", shown).replace(untrusted.JOINER, "")
    assert read == f"Highlighting **{untrusted.neutral(text).strip()}**."
    assert "\u202e" not in shown and "\n" not in t("card.mine", who="a\n# b", value="1")
    # a text already escaped, or a number, goes in once, not escaped twice
    assert t("filters.notice", notice=t("notice.highlight", value="a_b")) == (
        "Ignored from the link: highlight=a\\_b is not a user in the data; nothing highlighted"
    )


def open_page(at: AppTest, page: str) -> AppTest:
    at._page_hash = next(h for h, p in at._registered_pages.items() if p["page_name"] == page)
    at.run()
    assert not at.exception, at.exception
    return at


def app(store: Path, monkeypatch: pytest.MonkeyPatch, identity: Identity, **params: Any) -> AppTest:
    monkeypatch.setenv("USAGE_STORE", str(store))
    monkeypatch.setenv("USAGE_TIMEZONE", "Asia/Seoul")
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["identity"] = identity
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


EVIL_PARAMS: dict[str, Any] = DAY | {
    "highlight": USER,
    "user": [USER, "[u](https://evil.example/u)"],
    "model": [MODEL, "<img src=https://evil.example/m.png>"],
    "client": [CLIENT],
    "node": [NODE],
    "tz": "[tz](https://evil.example/tz)",
    "by": "![b](https://evil.example/b.png)",
    "lang": "www.evil.example",
}


def test_no_page_shows_a_link_or_image_from_the_data_or_the_url(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    admin = app(store, monkeypatch, Identity(role="admin", name="admin"), **EVIL_PARAMS)
    shown = markdown_texts(admin)
    assert any(body.startswith("Highlighting") and "evil" in body for body in shown), shown
    assert any("evil" in body for body in shown if body.startswith(USER[:1]) or "of all" in body)
    assert unsafe(admin) == []
    for page in ("Nodes", "Budgets", "ETL status"):
        assert unsafe(open_page(admin, page)) == [], page
    assert any("evil" in body for body in markdown_texts(admin))  # the run's error, escaped

    student = Identity(role="student", name=USER, keys=(key_of(USER),), key=key_of(USER))
    mine = app(store, monkeypatch, student, **EVIL_PARAMS)
    assert mine.metric, "the student's page"
    assert any("evil" in body for body in markdown_texts(mine))  # their key alias and budget
    assert unsafe(mine) == []


# --- CSV downloads ------------------------------------------------------------------------


def test_a_downloaded_csv_holds_no_formula_and_numbers_stay_numbers() -> None:
    frame = pd.DataFrame(
        {
            "user": ['=HYPERLINK("https://evil.example")', "+1", "-2", "@SUM(A1)", "\tx", "\ry", "bob"],
            "spend_usd": [-1.5, 2.0, -3.0, 0.0, 1.0, 2.0, 3.0],
            "requests": [-1, 2, 3, 4, 5, 6, 7],
        }
    )
    text = panels.csv_bytes(frame).decode("utf-8")
    read = pd.read_csv(io.StringIO(text), keep_default_na=False)
    assert read["user"].tolist() == [
        '\'=HYPERLINK("https://evil.example")',
        "'+1",
        "'-2",
        "'@SUM(A1)",
        "'\tx",
        "'\ry",
        "bob",
    ]
    assert read["spend_usd"].tolist() == [-1.5, 2.0, -3.0, 0.0, 1.0, 2.0, 3.0]
    assert read["requests"].tolist() == [-1, 2, 3, 4, 5, 6, 7]
    assert ",-1.5,-1\r\n" in text and ",-3.0," in text and "'-1.5" not in text


def test_a_name_that_reads_as_a_formula_is_downloaded_as_text(store: Path) -> None:
    by_user = StoreReader(store).run("by_user", DAY_FILTERS)
    assert KEY_ALIAS in by_user["user"].tolist()
    read = pd.read_csv(io.StringIO(panels.csv_bytes(by_user).decode("utf-8")), keep_default_na=False)
    assert "'" + KEY_ALIAS in read["user"].tolist()
    assert pd.api.types.is_numeric_dtype(read["spend_usd"])


# --- URL parameters ---------------------------------------------------------------------

EDGES = [
    "9999-12-31",
    "0001-01-01",
    "2026-02-30",
    "2026-11-21T00:00",
    "1" * 400,
    "-1",
    "99999999999999999999999",
    "1e309",
    "nan",
    "\x00",
    "a\x00b",
    "서울",
    "Asia/Seoul\x00",
    "../../etc/passwd",
    "a" * 5000,
    "",
    " ",
    "%",
    "{}",
    "custom",
    "\u202e",
    LINKS,
]
KEYS = ["range", "from", "to", "tz", "user", "model", "node", "client", "highlight", "by", "lang", "zzz"]


def random_params(rng: random.Random) -> dict[str, list[str]]:
    def value() -> str:
        if rng.random() < 0.5:
            return rng.choice(EDGES)
        alphabet = "az09-:/._%\x00\u202eé서 " + "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(4))
        return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))

    params: dict[str, list[str]] = {"range": ["custom"]} if rng.random() < 0.5 else {}
    for key in rng.sample(KEYS, rng.randrange(1, len(KEYS))):
        params[key] = [value() for _ in range(rng.choice((1, 1, 2, 3)))]  # repeated keys too
    return params


def test_any_url_parses_to_a_view_that_can_be_queried() -> None:
    rng = random.Random(20261205)
    known = {"user": ["alice", "bob"], "model": ["m"], "node": ["n"], "client": ["c"]}
    now = dt.datetime(2026, 12, 5, tzinfo=dt.UTC)
    cases = [{"range": ["custom"], "from": [a], "to": [b]} for a in EDGES for b in EDGES[:4]]
    cases += [random_params(rng) for _ in range(3000)]
    for params in cases:
        state, _ = parse(params, default_tz="Asia/Seoul", known=known)
        filters = state.filters(now)
        assert filters.start is not None and filters.end is not None and filters.start < filters.end, params


@pytest.mark.parametrize("seed", range(6))
def test_any_url_renders_the_page_without_an_error(
    store: Path, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    rng = random.Random(seed)
    cases: list[dict[str, Any]] = [
        {"range": "custom", "from": "9999-12-31", "to": "9999-12-31"},
        {"range": "custom", "from": "0001-01-01", "to": "0001-01-01"},
        {"range": "custom", "from": "9999-12-30", "to": "9999-12-31", "tz": "Pacific/Kiritimati"},
        {"range": "custom", "from": "0001-01-01", "to": "0001-01-02", "tz": "America/Adak"},
        {"tz": "a" * 5000, "lang": "\x00", "by": "1e309", "user": ["\x00", "bob", "bob"]},
        {"range": ["custom", "7d", "custom"], "from": ["\x00", "2026-11-21"], "to": "2026-11-21"},
    ]
    params: dict[str, Any] = cases[seed]
    for _ in range(4):
        page = app(store, monkeypatch, Identity(role="admin", name="admin"), **params)  # asserts no exception
        assert page.metric or page.subheader
        params = {key: values if len(values) > 1 else values[0] for key, values in random_params(rng).items()}


# --- stack traces -------------------------------------------------------------------------


def test_an_uncaught_error_sends_no_stack_trace_to_the_browser() -> None:
    """What .streamlit/config.toml says, as the installed Streamlit reads it: `false` is
    its "stacktrace" level (the trace still goes to the browser); "none" sends neither
    the message nor the trace."""
    from streamlit.elements import exception

    setting = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())["client"]["showErrorDetails"]
    previous = st_config.get_option("client.showErrorDetails")
    st_config.set_option("client.showErrorDetails", setting)
    try:
        try:
            raise OverflowError("date value out of range: /srv/secret/path")
        except OverflowError as error:
            proto = ExceptionProto()
            exception.marshall(proto, error, apply_show_error_details=True)
    finally:
        st_config.set_option("client.showErrorDetails", previous)
    assert list(proto.stack_trace) == []
    assert "secret" not in proto.message and "OverflowError" not in proto.type
