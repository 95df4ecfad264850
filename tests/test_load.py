"""The load test (bench/locustfile.py's Locust users playing bench/load.py's scenario over
bench/st_session.py): its pieces on crafted messages, then short Locust runs of real
sessions against a served simulated store."""

from __future__ import annotations

import csv
import datetime as dt
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

from bench.load import ADMIN_ACTIONS, KINDS, Isolation, first_round, loopback_url, next_action, population
from bench.st_session import MessageCache, Node, PageModel, Widgets, bar_click, texts, trigger_state
from dashboard.panels import toggled_highlight
from etl.run import ingest_rows
from etl.simulate import PEOPLE, node_rules, simulate
from settings.config import Config
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


def test_people_of_a_role_start_their_first_round_at_different_actions() -> None:
    firsts = [first_round(ADMIN_ACTIONS, turn) for turn in range(len(ADMIN_ACTIONS))]
    assert {round_[0] for round_ in firsts} == set(ADMIN_ACTIONS)
    assert all(sorted(round_) == sorted(ADMIN_ACTIONS) for round_ in firsts)


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


def _locust(store: Path, tmp_path: Path, *args: str) -> tuple[int, str]:
    """`python -m bench.load --store ...`: a server of `store`, Locust on it, headless,
    CSV files under tmp_path/run_*; the exit code and what it printed."""
    command = [sys.executable, "-m", "bench.load", "--store", str(store), "--people", "simulated"]
    before = set(browser.ARTIFACTS.glob("streamlit-*.log"))
    done = subprocess.run(
        [*command, "--headless", "--only-summary", "--csv", str(tmp_path / "run"), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,  # the exit code is asserted
    )
    # the server bench.load started logged where a test's own would: kept only if this test fails
    browser.stopped_logs.extend(set(browser.ARTIFACTS.glob("streamlit-*.log")) - before)
    return done.returncode, done.stdout + done.stderr


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as table:
        return list(csv.DictReader(table))


@pytest.mark.slow
def test_five_users_do_everything_without_failures_or_leaks(simulated_store: Path, tmp_path: Path) -> None:
    code, output = _locust(
        simulated_store,
        tmp_path,
        *("-u", "5", "-r", "5", "-t", "20s", "--think", "1,2", "--students", "0.4"),
    )
    stats = [row for row in _rows(tmp_path / "run_stats.csv") if row["Name"] != "Aggregated"]
    kinds = {row["Type"] for row in stats}
    assert kinds >= {"open", "signin", *ADMIN_ACTIONS} and kinds <= set(KINDS) - {"stuck"}, output
    assert {row["Name"] for row in stats} == {"admin", "student"}, output
    assert all(row["Failure Count"] == "0" for row in stats), output
    assert _rows(tmp_path / "run_failures.csv") == [], output
    signins = {row["Name"]: int(row["Request Count"]) for row in stats if row["Type"] == "signin"}
    assert signins["admin"] >= 3 and signins["student"] >= 2, output
    # every action a student made was followed by the search of their page for other ids;
    # an action still under way when the run stops may be searched and not yet in the
    # statistics Locust wrote: at most one per student user (two of the five here)
    student_actions = sum(int(row["Request Count"]) for row in stats if row["Name"] == "student")
    isolation = _rows(tmp_path / "run_isolation.csv")[0]
    assert student_actions > 2, output
    assert student_actions <= int(isolation["student_pages"]) <= student_actions + 2, output
    assert isolation["leaks"] == "0", output
    assert code == 0, output


@pytest.mark.slow
def test_a_student_shown_other_peoples_names_is_a_leak_and_fails_the_run(
    simulated_store: Path, tmp_path: Path
) -> None:
    named = tmp_path / "named.toml"
    named.write_text('[dashboard]\npeers = "named"\n', encoding="utf-8")  # the lab shares names
    code, output = _locust(
        simulated_store,
        tmp_path,
        *("--dashboard-config", str(named), "-u", "1", "-r", "1", "-t", "6s"),
        *("--students", "1", "--think", "1,1"),
        *("--exit-code-on-error", "0"),  # a leak fails the run all the same
    )
    leaks = [row for row in _rows(tmp_path / "run_failures.csv") if row["Method"] == "isolation"]
    assert leaks and leaks[0]["Name"] == "leak", output
    student = leaks[0]["Error"].split(" ", 1)[0]
    assert student not in leaks[0]["Error"].split(" was shown ", 1)[1], output
    assert int(_rows(tmp_path / "run_isolation.csv")[0]["leaks"]) > 0, output
    assert code == 1, output
