"""Each GPU node's verdict (dashboard/verdicts.py over queries/node_verdicts.sql) on a lab
whose every node's state is known (tests/verdict_lab.py): one slow against its peers, one
slow against its own week before, one failing, one down, one with too few requests."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard import verdicts
from queries.runner import StoreReader, reader
from tests import verdict_lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> StoreReader:
    return reader(verdict_lab.build(tmp_path_factory.mktemp("verdicts") / "store"), "Asia/Seoul")


@pytest.fixture(scope="module")
def judged(lab: StoreReader) -> dict[str, verdicts.Verdict]:
    now = lab.run("node_verdicts", verdict_lab.WEEK)
    before = lab.run("node_verdicts", verdict_lab.WEEK.previous())
    return {v.node: v for v in verdicts.judge(now, before)}


def test_the_query_gives_each_node_and_models_figures(lab: StoreReader) -> None:
    now = lab.run("node_verdicts", verdict_lab.WEEK).set_index(["node", "model"])
    slow = now.xs(("l40-b", verdict_lab.QWEN))
    assert slow["requests"] == 50
    assert slow["streamed_requests"] == 50
    assert slow["ttft_p95_ms"] == pytest.approx(12000, rel=0.03)
    assert slow["output_tps_p50"] == pytest.approx(15, rel=0.03)
    spark = now.xs(("spark", verdict_lab.GPT))
    assert (spark["failures"], spark["requests"]) == (10, 50)
    assert "retired" not in now.index.get_level_values("node")


def test_every_nodes_verdict(judged: dict[str, verdicts.Verdict]) -> None:
    assert {node: v.status for node, v in judged.items()} == {
        "blackwell": "good",
        "spark": "failing",
        "l40-a": "good",
        "l40-b": "slow",
        "l40-c": "good",
        "solo": "slow",
        "retired": "down",
        "tiny": "too_few",
    }


def test_the_slow_node_is_compared_with_the_other_nodes_of_its_model(
    judged: dict[str, verdicts.Verdict],
) -> None:
    reason = judged["l40-b"].reason
    # the worse of its two: speed 15 against 57.5 tok/s is 3.8x, time to first token 12 s
    # against the median of l40-a's and l40-c's (0.5 and 0.55 s) is 22.9x
    assert reason.kind == "ttft_peers"
    assert reason.values["model"] == verdict_lab.QWEN
    assert reason.values["other_ms"] == pytest.approx(525, rel=0.03)
    assert reason.values["times"] == pytest.approx(12000 / 525, rel=0.05)


def test_a_node_alone_on_its_model_is_compared_with_its_own_week_before(
    judged: dict[str, verdicts.Verdict],
) -> None:
    reason = judged["solo"].reason
    assert reason.kind == "ttft_before"
    assert reason.values["other_ms"] == pytest.approx(1000, rel=0.03)
    assert reason.values["ttft_ms"] == pytest.approx(5000, rel=0.03)


def test_failing_down_and_too_few_say_their_numbers(judged: dict[str, verdicts.Verdict]) -> None:
    assert judged["spark"].reason.values == {"rate": 0.2, "failures": 10, "requests": 50}
    assert judged["retired"].reason.values == {"before": 45}
    assert judged["tiny"].reason.values == {"requests": 5}


def test_the_worst_come_first(lab: StoreReader) -> None:
    now = lab.run("node_verdicts", verdict_lab.WEEK)
    before = lab.run("node_verdicts", verdict_lab.WEEK.previous())
    order = [v.node for v in verdicts.judge(now, before)]
    assert order[:2] == ["retired", "spark"]
    assert set(order[2:4]) == {"l40-b", "solo"}
    assert order[-1] == "tiny"


def test_an_idle_range_and_a_lab_without_history_give_no_false_alarm(lab: StoreReader) -> None:
    now = lab.run("node_verdicts", verdict_lab.WEEK)
    assert verdicts.judge(now.iloc[0:0], now) == []  # nobody served: no node is "down"
    alone = {v.node: v.status for v in verdicts.judge(now, None)}
    assert alone["solo"] == "good"  # nothing to compare it with: not slow
    assert "retired" not in alone


def test_a_nan_in_the_figures_is_no_verdict(lab: StoreReader) -> None:
    now = lab.run("node_verdicts", verdict_lab.WEEK)
    blank = now.assign(ttft_p95_ms=float("nan"), output_tps_p50=float("nan"))
    statuses = {v.node: v.status for v in verdicts.judge(blank, pd.DataFrame(columns=now.columns))}
    assert statuses["l40-b"] == "good" and statuses["spark"] == "failing"
