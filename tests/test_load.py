"""The load generator (bench/load.py over bench/st_session.py): its pieces on crafted
messages, then a short run of real sessions against a served simulated store."""

from __future__ import annotations

import datetime as dt
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from streamlit.elements.plotly_chart import PlotlyChartSelectionSerde
from streamlit.proto.Block_pb2 import Block
from streamlit.proto.Delta_pb2 import Delta
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.Markdown_pb2 import Markdown
from streamlit.proto.Selectbox_pb2 import Selectbox
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.load import ADMIN_ACTIONS, Isolation, loopback_url, next_action, percentile, population, visitors
from bench.st_session import MessageCache, Node, PageModel, Widgets, bar_click, texts, trigger_state
from dashboard.panels import toggled_highlight
from etl.config import Config
from etl.run import ingest_rows
from etl.simulate import PEOPLE, node_rules, simulate
from tests import browser

REPO = Path(__file__).resolve().parent.parent
STUDENTS = ("student01", "student07", "student10", "student11")


# --- isolation ----------------------------------------------------------------------------


def test_the_isolation_check_finds_another_students_id_wherever_the_page_carries_it() -> None:
    check = Isolation("student07", STUDENTS)
    assert check.leaks("Signed in as **student07** (student)") == []
    assert check.leaks('{"data":[{"y":["You","Student A"],"customdata":["student10"]}]}') == ["student10"]
    assert check.leaks("student01 and student11, then student07") == ["student01", "student11"]
    assert check.leaks("key alias student11-laptop") == ["student11"]


def test_the_isolation_check_matches_whole_ids_only() -> None:
    check = Isolation("student07", ["student1", "minji.park", "student07"])
    assert check.leaks("student10 student17 xstudent1 minji.parker") == []
    assert check.leaks("Student A, Student B: anonymous peers") == []
    assert check.leaks("sk-demo-minji.park-0.") == ["minji.park"]
    assert check.leaks("(student1)") == ["student1"]


def test_the_simulated_populations_students_sign_in_with_their_demo_keys() -> None:
    students, everyone = population("simulated")
    assert {p.user_id for p in students} == {p.user_id for p in PEOPLE} - {"prof.kim"}
    assert "prof.kim" in everyone
    assert all(p.key == f"sk-demo-{p.user_id}-0" for p in students)
    synthetic, ids = population("synthetic")
    assert synthetic[7].user_id == "student07" and synthetic[7].key == "sk-key-7" and len(ids) == 40


# --- the scenario and the numbers ---------------------------------------------------------


def test_percentiles_are_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentile(values, 50) == 10 and percentile(values, 95) == 19 and percentile(values, 100) == 20
    assert percentile([3.0], 95) == 3.0


def test_students_are_spread_through_the_ramp_and_sign_in_as_different_people() -> None:
    students, _ = population("synthetic")
    people = visitors(5, 0.4, students, random.Random(1))
    chosen = [v.student.user_id for v in people if v.student is not None]
    assert len(chosen) == 2 and len(set(chosen)) == 2
    assert [v.role for v in people] == ["admin", "student", "admin", "student", "admin"]
    assert [v.turn for v in people] == [0, 0, 1, 1, 2]  # their first actions differ
    assert all(v.student is None for v in visitors(3, 0.0, students, random.Random(1)))


def test_each_round_does_every_action_once_and_changes_page_last() -> None:
    deck: list[str] = []
    rng = random.Random(3)
    round_one = [next_action(deck, ADMIN_ACTIONS, lambda _: True, rng) for _ in ADMIN_ACTIONS]
    assert sorted(k for k in round_one if k) == sorted(ADMIN_ACTIONS) and round_one[-1] == "page"
    assert next_action([], ADMIN_ACTIONS, lambda k: k == "measure", rng) == "measure"
    assert next_action([], ADMIN_ACTIONS, lambda _: False, rng) is None


@pytest.mark.parametrize("url", ["http://127.0.0.1:8501", "http://localhost:8501/", "http://[::1]:8501"])
def test_loopback_urls_are_accepted(url: str) -> None:
    assert loopback_url(url).startswith("http://")


@pytest.mark.parametrize(
    "url", ["http://example.com:8501", "http://10.1.2.3:8501", "https://127.0.0.1:8501", "127.0.0.1:8501"]
)
def test_anything_but_a_loopback_url_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match=r"127\.0\.0\.1|loopback"):
        loopback_url(url)


# --- the protocol pieces ------------------------------------------------------------------


def _markdown(body: str) -> Delta:
    return Delta(new_element=Element(markdown=Markdown(body=body)))


def test_the_page_model_drops_what_a_finished_run_did_not_draw_again() -> None:
    page = PageModel()
    page.apply((0, 0), Delta(add_block=Block(vertical=Block.Vertical())), run=1, script_hash="main")
    page.apply((0, 0, 0), _markdown("first"), run=1, script_hash="main")
    page.apply((0, 0, 1), _markdown("second"), run=1, script_hash="main")
    page.apply((0, 0), Delta(add_block=Block(vertical=Block.Vertical())), run=2, script_hash="main")
    page.apply((0, 0, 0), _markdown("first again"), run=2, script_hash="main")
    assert "second" in page.text()  # until the run finishes, the old element stays, as on screen
    page.clear_stale(2)
    assert page.text().splitlines() == ["first again"]
    page.apply((0, 0), _markdown("no block any more"), run=3, script_hash="main")
    assert list(page.nodes) == [(0, 0)]


def test_widgets_hold_their_default_then_what_the_person_chose_unless_the_server_sets_one() -> None:
    widgets = Widgets()
    box = Selectbox(id="$$ID-1-f_range", label="Time range", options=["24 h", "7 d"], default=1)
    widgets.drawn(Node("selectbox", box, 1, "main"))
    assert widgets.states[box.id].string_value == "7 d"
    widgets.hold(WidgetState(id=box.id, string_value="24 h"))
    widgets.drawn(Node("selectbox", box, 2, "main"))
    assert widgets.states[box.id].string_value == "24 h"  # a redraw keeps the browser's value
    box.set_value, box.raw_value = True, "7 d"
    widgets.drawn(Node("selectbox", box, 3, "main"))
    assert widgets.states[box.id].string_value == "7 d"
    sent = widgets.message(trigger_state("$$ID-2-submit"))
    assert {s.id: s.WhichOneof("value") for s in sent.widgets} == {
        box.id: "string_value",
        "$$ID-2-submit": "trigger_value",
    }
    assert "$$ID-2-submit" not in widgets.states  # a trigger goes with one rerun only
    assert widgets.message(only=set()).widgets == []


def test_cached_messages_come_back_from_references_and_expire() -> None:
    cache = MessageCache()
    big = ForwardMsg(hash="h1", delta=_markdown("a large chart"))
    big.metadata.cacheable = True
    big.metadata.delta_path[:] = [0, 3]
    cache.resolve(big, big.SerializeToString())
    assert cache.hashes() == ["h1"]
    ref = ForwardMsg(ref_hash="h1")
    ref.metadata.delta_path[:] = [0, 5]
    full = cache.resolve(ref, ref.SerializeToString())
    assert full.delta.new_element.markdown.body == "a large chart"
    assert list(full.metadata.delta_path) == [0, 5]  # where the reference puts it
    for _ in range(3):
        cache.run_finished(max_age=2)
    assert cache.hashes() == []


def test_a_click_on_a_bar_is_sent_as_streamlit_and_the_app_read_it() -> None:
    chart = {"data": [{"type": "bar", "y": ["ann", "bob"], "x": [3.0, 1.5], "customdata": ["ann", "bob"]}]}
    sent = bar_click(chart, 1)
    state = PlotlyChartSelectionSerde().deserialize(sent)
    points: list[dict[str, Any]] = state["selection"]["points"]
    assert points[0]["customdata"] == "bob" and state["selection"]["point_indices"] == [1]
    assert toggled_highlight(points, None) == "bob"
    assert toggled_highlight(points, "bob") is None
    assert " " not in sent  # JSON.stringify's spacing: the frontend compares states as text


def test_texts_reach_into_nested_messages() -> None:
    element = Element(markdown=Markdown(body="**student10** spent $3"))
    assert "**student10** spent $3" in list(texts(element))


# --- real sessions --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def simulated_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("load") / "store"
    ingest_rows(Config(store=store, nodes=node_rules()), simulate(days=10, end=dt.datetime.now(dt.UTC)))
    return store


def _load(store: Path, tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    report = tmp_path / "load.json"
    command = [sys.executable, "-m", "bench.load", "--store", str(store), "--people", "simulated"]
    before = set(browser.ARTIFACTS.glob("streamlit-*.log"))
    done = subprocess.run(
        [*command, *args, "--json", str(report)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,  # the exit code is asserted
    )
    output = done.stdout + done.stderr
    # the server bench.load started logged where a test's own would: kept only if this test fails
    browser.stopped_logs.extend(set(browser.ARTIFACTS.glob("streamlit-*.log")) - before)
    assert report.exists(), output
    return done.returncode, json.loads(report.read_text()), output


@pytest.mark.slow
def test_five_sessions_do_everything_without_failures_or_leaks(simulated_store: Path, tmp_path: Path) -> None:
    code, report, output = _load(
        simulated_store,
        tmp_path,
        *("--sessions", "5", "--ramp", "5", "--duration", "20", "--think", "1,2", "--students", "0.4"),
    )
    assert report["failures"]["count"] == 0, output
    assert set(report["actions"]) >= {"open", "signin", *ADMIN_ACTIONS}, output
    assert report["sessions"]["signed_in"] >= 5, output
    assert report["isolation"]["student_pages_checked"] > 0, output
    assert report["isolation"]["violations"] == [], output
    assert code == 0, output


@pytest.mark.slow
def test_a_student_shown_other_peoples_names_is_a_violation(simulated_store: Path, tmp_path: Path) -> None:
    named = tmp_path / "named.toml"
    named.write_text('[dashboard]\npeers = "named"\n', encoding="utf-8")  # the lab shares names
    code, report, output = _load(
        simulated_store,
        tmp_path,
        *("--config", str(named), "--sessions", "1", "--students", "1", "--duration", "5", "--think", "1,1"),
    )
    violations = report["isolation"]["violations"]
    assert violations, output
    assert violations[0]["student"] not in violations[0]["found"]
    assert code == 1, output
