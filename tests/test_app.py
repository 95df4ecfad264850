"""The page run by Streamlit's AppTest over test stores: panels, cards, URL state, highlight."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from dashboard import figures
from dashboard import format as fmt
from dashboard.auth import Identity
from dashboard.panels import toggled_highlight
from tests import known_store, plotly_json

APP = str(Path(__file__).resolve().parent.parent / "page.py")
SEOUL_NOV_21 = {"range": "custom", "from": "2026-11-21", "to": "2026-11-21"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return known_store.build(tmp_path_factory.mktemp("app") / "store")


def page(store: Path, monkeypatch: pytest.MonkeyPatch, **params: str | list[str]) -> AppTest:
    """The page as an administrator sees it (signing in is tested in test_access.py)."""
    monkeypatch.setenv("USAGE_STORE", str(store))
    monkeypatch.setenv("USAGE_TIMEZONE", "Asia/Seoul")
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["identity"] = Identity(role="admin", name="admin")
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def url(at: AppTest, key: str) -> list[str]:
    """A query parameter's values as the browser's URL holds them."""
    value = at.query_params.get(key, [])
    return [value] if isinstance(value, str) else list(value)


def cards(at: AppTest) -> dict[str, tuple[str, str]]:
    return {m.label: (m.value, m.delta) for m in at.metric}


def charts(at: AppTest) -> dict[str, dict[str, object]]:
    """Each Plotly chart's figure, by its key."""
    out = {}
    for element in at.get("plotly_chart"):
        key = element.proto.id.rsplit("-", 1)[-1] if element.proto.id else ""
        out[key] = json.loads(element.proto.spec)
    return out


def test_every_panel_renders_and_the_cards_are_right(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fmt, "MIN_PREVIOUS_REQUESTS", 1)  # Nov 20 holds one request: compare anyway
    at = page(store, monkeypatch, **SEOUL_NOV_21)
    assert [h.value for h in at.main.header] == ["Overview"]  # the page says which it is
    # the period, on the card; a day of this year without its year
    this_year = dt.datetime.now(dt.UTC).year == 2026
    assert {m.proto.delta_description for m in at.metric} == {"vs Nov 20" if this_year else "vs 2026-11-20"}
    assert cards(at) == {
        "Spend": ("$0.0203", "+102.6 %"),  # vs. Nov 20 (a1, $0.010)
        "Requests": ("3", "+200.0 %"),
        "Tokens": ("4,949", "+280.7 %"),  # below 10,000 in full, as in Korean
        "Cache hit rate": ("25.2 %", "+5.2 pp"),
        "Success rate": ("66.7 %", "-33.3 pp"),
        "Median latency": ("4.0 s", "+100.0 %"),
    }
    assert len(at.get("plotly_chart")) == 8
    # what each client tool cost, beside its requests and tokens (Claude Code: alice's $0.020)
    clients = plotly_json.decode(charts(at)["clients"])["data"]
    spend = next(trace for trace in clients if trace["xaxis"] == "x3")
    assert dict(zip(spend["y"], spend["text"], strict=True)) == {
        "Claude Code": "98.7 %",
        "Python HTTP": "1.3 %",
        "unknown": "0.0 %",
    }
    assert not at.warning and not at.error
    assert [b.proto.label for b in at.get("download_button")] == [
        "Users (CSV)",
        "Over time (CSV)",
        "Nodes (CSV)",
        "Users by client (CSV)",
        "Models (CSV)",
    ]


def test_url_parameters_set_the_filters(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(store, monkeypatch, **SEOUL_NOV_21, user="bob", tz="UTC")
    assert at.sidebar.multiselect[0].value == ["bob"]
    assert at.sidebar.selectbox[1].value == "UTC"
    # Nov 21 in UTC holds only d1, bob's llama.cpp request
    assert cards(at)["Requests"][0] == "1" and cards(at)["Tokens"][0] == "2,549"
    assert url(at, "user") == ["bob"]


def test_a_changed_filter_goes_into_the_url(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(store, monkeypatch, **SEOUL_NOV_21)
    at.sidebar.multiselect[2].select("l40-a").run()  # GPU nodes
    assert cards(at)["Requests"][0] == "1"
    assert url(at, "node") == ["l40-a"] and url(at, "range") == ["custom"]


def test_invalid_parameters_are_ignored_with_a_notice(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(store, monkeypatch, range="forever", user=["bob", "mallory"], highlight="eve")
    notices = [w.value for w in at.sidebar.warning]
    assert any("range='forever'" in n for n in notices)
    assert any("mallory" in n for n in notices) and any("eve" in n for n in notices)
    assert at.sidebar.multiselect[0].value == ["bob"]


def test_a_seeded_highlight_changes_every_figure_and_the_cards(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = page(store, monkeypatch, **SEOUL_NOV_21)
    lit = page(store, monkeypatch, **SEOUL_NOV_21, highlight="bob")
    before, after = charts(plain), charts(lit)
    assert set(before) == set(after)
    for key in before:
        assert json.dumps(before[key]) != json.dumps(after[key]), key
        assert figures.ACCENT in json.dumps(after[key]), key
    captions = [c.value for c in lit.caption]
    assert "bob: 2 (66.7 % of all)" in captions
    assert "bob: 50.0 %" in captions  # success rate: one of two failed
    assert "Highlighting **bob**." in [m.value for m in lit.markdown]


def test_every_chart_is_sent_as_the_browser_draws_it_once(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without Streamlit's theme (its template, new on every mount, made the browser compute
    every chart twice), numbers as JSON numbers (a typed array is new data to Plotly.react
    whatever the revision says) and a data revision that follows the data (issue 30)."""
    plain: dict[str, Any] = charts(page(store, monkeypatch, **SEOUL_NOV_21))
    lit_page = page(store, monkeypatch, **SEOUL_NOV_21, highlight="bob")
    lit: dict[str, Any] = charts(lit_page)
    assert {element.proto.theme for element in lit_page.get("plotly_chart")} == {""}
    for key, spec in {**{f"{k} (plain)": v for k, v in plain.items()}, **lit}.items():
        layout = spec["layout"]
        assert "template" not in layout, key
        assert "bdata" not in json.dumps(spec), key
        assert layout["font"]["family"] == figures.FONT and layout["paper_bgcolor"] == figures.BACKGROUND, key
    changed = {key for key in lit if plain[key]["data"] != lit[key]["data"]}
    assert len(changed) >= 7  # the matrix outlines bob's row: a shape, the same data
    for key in lit:
        revised = plain[key]["layout"]["datarevision"] != lit[key]["layout"]["datarevision"]
        assert revised == (key in changed), key


def test_the_clear_button_removes_the_highlight(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page(store, monkeypatch, **SEOUL_NOV_21, highlight="bob")
    at.button(key="clear_highlight").click().run()
    assert "highlight" not in at.query_params
    assert not [c for c in at.caption if c.value.startswith("bob:")]


def test_clicking_a_bar_toggles_the_highlight() -> None:
    bar = [{"customdata": "bob", "y": "bob", "point_index": 1}]
    assert toggled_highlight(bar, None) == "bob"
    assert toggled_highlight(bar, "alice") == "bob"
    assert toggled_highlight(bar, "bob") is None
    assert toggled_highlight([{"customdata": ["alice"]}], None) == "alice"
    assert toggled_highlight([], "bob") == "bob"
    assert toggled_highlight([{"customdata": "", "y": "other 12"}], "bob") == "bob"  # the folded row


def test_an_empty_store_says_how_to_run_the_etl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A lab that has configured its database but not run the ETL yet: no demo, but how
    to fill the store (without a database the demo is shown: tests/test_demo.py)."""
    monkeypatch.setenv("LITELLM_DATABASE_URL", "postgresql://usage@db.lab:5432/litellm")
    monkeypatch.setenv("USAGE_DEMO_STORE", str(tmp_path / "demo"))
    at = page(tmp_path / "empty", monkeypatch)
    assert "The store is empty" in [s.value for s in at.subheader]
    assert any("python -m etl run" in c.value for c in at.code)
    assert not any("Demo data" in w.value for w in at.warning) and not (tmp_path / "demo").exists()


def test_a_stale_or_failed_etl_is_shown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = known_store.build(tmp_path / "store")
    path = store / "etl_runs.parquet"
    runs = pq.read_table(path).to_pylist()
    two_hours_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=2)
    runs[0]["finished_at"] = two_hours_ago
    failed = {"run_id": "later", "status": "failed", "error": "cannot connect to the LiteLLM database"}
    runs.append(runs[0] | failed | {"finished_at": two_hours_ago + dt.timedelta(hours=1)})
    pq.write_table(pa.Table.from_pylist(runs, schema=pq.read_schema(path)), path)
    at = page(store, monkeypatch, **SEOUL_NOV_21)
    assert any("2.0 h ago" in w.value for w in at.warning), [w.value for w in at.warning]
    assert any("cannot connect to the LiteLLM database" in e.value for e in at.error)


def test_a_near_empty_period_before_gives_no_change_and_says_why(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One request on Nov 20 against three on Nov 21: "+200 %" would mean nothing."""
    at = page(store, monkeypatch, **SEOUL_NOV_21)
    assert all(not delta for _, delta in cards(at).values()), cards(at)
    day = "Nov 20" if dt.datetime.now(dt.UTC).year == 2026 else "2026-11-20"  # a day of this year: no year
    assert any(
        f"No change shown: the period before ({day}) holds too few requests to compare with "
        "(requests: 1)." in c.value
        for c in at.caption
    )
