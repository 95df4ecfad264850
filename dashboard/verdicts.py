"""The verdict on each GPU node, with its reason in numbers: down, failing, slow, good, or
too few requests to judge. Judged from queries/node_verdicts.sql over the range and over
the period before it; pure (no Streamlit), so the Overview's block and the Nodes page say
the same thing, and tests check it on a known lab.

The thresholds, and why (docs/architecture.md points here):
- MIN_REQUESTS, MIN_STREAMED: a p95 of three requests is one slow request; below 30
  requests (20 streamed for time to first token and speed) a node is "too few to judge".
- FAILING_RATE, FAILING_MIN: 10 % of its requests failed, and at least 5: the Nodes page
  marks the same on its routing chart. One failure in three requests is no verdict.
- SLOWER, SLOWER_MS: a node is slow on a model when its p95 time to first token is at
  least twice the median of the other nodes serving that model (or, with none, its own in
  the period before) and at least 1 s longer: twice 80 ms is nobody's problem.
- SPEED_SHARE: or when its median output speed is at most half theirs. The other nodes
  are the comparison because their hardware serves the same requests; the node's own
  past, because a lab with one node has nothing else to go by.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

MIN_REQUESTS = 30
MIN_STREAMED = 20
FAILING_RATE = 0.10
FAILING_MIN = 5
SLOWER = 2.0
SLOWER_MS = 1000.0
SPEED_SHARE = 0.5

Status = Literal["down", "failing", "slow", "good", "too_few"]
ORDER: tuple[Status, ...] = ("down", "failing", "slow", "good", "too_few")  # the worst first


@dataclass(frozen=True)
class Reason:
    """Why: a key of the strings (verdict.reason.<kind>) and the numbers it names."""

    kind: str  # down, failures, ttft_peers, ttft_before, speed_peers, speed_before, serving, few
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    node: str
    status: Status
    reason: Reason
    requests: int


def judge(now: pd.DataFrame, before: pd.DataFrame | None) -> list[Verdict]:
    """Each node's verdict, the worst first (then by requests): `now` and `before` are
    node_verdicts.sql over the range and the period before it (None: no period before)."""
    before = before if before is not None else now.iloc[0:0]
    nodes = sorted(set(now["node"]) | set(before["node"]))
    anyone_served = int(now["requests"].sum()) > 0
    judged = (_judge_node(node, now, before, anyone_served) for node in nodes)
    verdicts = [v for v in judged if v is not None]
    return sorted(verdicts, key=lambda v: (ORDER.index(v.status), -v.requests, v.node))


def _judge_node(node: str, now: pd.DataFrame, before: pd.DataFrame, anyone_served: bool) -> Verdict | None:
    mine = now[now["node"] == node]
    requests = int(mine["requests"].sum())
    if requests == 0:
        served_before = int(before.loc[before["node"] == node, "requests"].sum())
        if anyone_served and served_before > 0:
            return Verdict(node, "down", Reason("down", {"before": served_before}), 0)
        return None  # an idle lab: nothing to say of any node
    if requests < MIN_REQUESTS:
        return Verdict(node, "too_few", Reason("few", {"requests": requests}), requests)
    failures = int(mine["failures"].sum())
    if failures >= FAILING_MIN and failures / requests >= FAILING_RATE:
        reason = Reason("failures", {"rate": failures / requests, "failures": failures, "requests": requests})
        return Verdict(node, "failing", reason, requests)
    slow = max(_slowness(node, mine, now, before), key=lambda pair: pair[0], default=None)
    if slow is not None:
        return Verdict(node, "slow", slow[1], requests)
    return Verdict(node, "good", _serving(mine), requests)


def _slowness(
    node: str, mine: pd.DataFrame, now: pd.DataFrame, before: pd.DataFrame
) -> Iterable[tuple[float, Reason]]:
    """Every way the node is slow on one of its models, with how many times slower."""
    for row in _timed(mine).to_dict("records"):
        peers = _timed(now[(now["model"] == row["model"]) & (now["node"] != node)])
        mine_before = _timed(before[(before["model"] == row["model"]) & (before["node"] == node)])
        if not peers.empty:
            ttft, speed, against = _median(peers["ttft_p95_ms"]), _median(peers["output_tps_p50"]), "peers"
        elif not mine_before.empty:
            ttft, speed = _median(mine_before["ttft_p95_ms"]), _median(mine_before["output_tps_p50"])
            against = "before"
        else:
            continue
        value_ms, value_tps = _number(row["ttft_p95_ms"]), _number(row["output_tps_p50"])
        values = {"model": row["model"], "ttft_ms": value_ms, "tps": value_tps}
        if value_ms is not None and ttft and value_ms >= SLOWER * ttft and value_ms - ttft >= SLOWER_MS:
            times = value_ms / ttft
            yield times, Reason(f"ttft_{against}", values | {"other_ms": ttft, "times": times})
        if value_tps and speed and value_tps <= SPEED_SHARE * speed:
            times = speed / value_tps
            yield times, Reason(f"speed_{against}", values | {"other_tps": speed, "times": times})


def _median(values: pd.Series[Any]) -> float | None:
    present = [float(v) for v in values if _number(v) is not None]
    return statistics.median(present) if present else None


def _number(value: Any) -> float | None:
    return None if value is None or pd.isna(value) else float(value)


def _timed(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with enough streamed requests for a p95 and a median to mean something."""
    return rows[rows["streamed_requests"].fillna(0) >= MIN_STREAMED]


def _serving(mine: pd.DataFrame) -> Reason:
    """A good node: its busiest timed model's figures, or its requests if none is timed."""
    timed = _timed(mine).sort_values("requests", ascending=False)
    if timed.empty:
        return Reason("serving", {"requests": int(mine["requests"].sum())})
    top = timed.iloc[0]
    return Reason(
        "timed", {"model": top["model"], "ttft_ms": top["ttft_p95_ms"], "tps": top["output_tps_p50"]}
    )
