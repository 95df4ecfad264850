"""A lab of seven GPU nodes whose verdicts are known (issue 28): over the week of Dec 1-8
(UTC), the week before it as the period to compare with.

- blackwell, spark: gpt-oss-120b; spark fails 1 request in 5 this week: failing
- l40-a, l40-c: qwen3-coder-30b at p95 time to first token ~0.5 s, ~60 tok/s: good
- l40-b: the same model at ~12 s and ~15 tok/s: slow (against l40-a and l40-c)
- solo: the only node of its model, 5x slower than the week before: slow (against itself)
- retired: served last week, nothing this week: down
- tiny: 5 requests this week: too few to judge
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from etl.config import Config, NodeRule
from etl.run import ingest_rows
from queries.filters import Filters
from tests import known_store

UTC = dt.UTC
NODES = tuple(
    NodeRule(name, api_bases=(f"{name}:8000",))
    for name in ("blackwell", "spark", "l40-a", "l40-b", "l40-c", "solo", "retired", "tiny")
)
WEEK = Filters(
    start=dt.datetime(2026, 12, 1, tzinfo=UTC), end=dt.datetime(2026, 12, 8, tzinfo=UTC), tz="Asia/Seoul"
)
THIS_WEEK = dt.datetime(2026, 12, 2, 1, 0)  # naive UTC, as LiteLLM writes it
LAST_WEEK = dt.datetime(2026, 11, 25, 1, 0)


def served(
    node: str, model: str, start: dt.datetime, n: int, *, ttft_ms: int, tps: float, failed: int = 0
) -> list[dict[str, Any]]:
    """`n` streamed requests on `node` one minute apart, 600 completion tokens each at
    `tps` after a first token at `ttft_ms`; the last `failed` of them failures."""
    rows = []
    for i in range(n):
        decode_ms = int(600 / tps * 1000)
        kind = "failure_after_routing" if i >= n - failed else "vllm_streamed_reasoning_cached"
        row = known_store.request(
            kind,
            f"user{i % 4}",
            start + dt.timedelta(minutes=i),
            request_id=f"{node}-{model}-{start:%m%d}-{i}",
            usage=None if kind.startswith("failure") else (1000, 0, 600, 0),
            duration_ms=ttft_ms + decode_ms,
            ttft_ms=None if kind.startswith("failure") else ttft_ms,
            api_base=f"http://{node}:8000/v1/chat/completions",
            model_group=model,
            spend=0.001,
        )
        rows.append(row)
    return rows


GPT, QWEN, SOLO = "gpt-oss-120b", "qwen3-coder-30b", "glm-4.6"
ROWS = [
    # this week
    *served("blackwell", GPT, THIS_WEEK, 60, ttft_ms=300, tps=120),
    *served("spark", GPT, THIS_WEEK, 50, ttft_ms=350, tps=100, failed=10),
    *served("l40-a", QWEN, THIS_WEEK, 50, ttft_ms=500, tps=60),
    *served("l40-b", QWEN, THIS_WEEK, 50, ttft_ms=12000, tps=15),
    *served("l40-c", QWEN, THIS_WEEK, 40, ttft_ms=550, tps=55),
    *served("solo", SOLO, THIS_WEEK, 40, ttft_ms=5000, tps=40),
    *served("tiny", QWEN, THIS_WEEK, 5, ttft_ms=400, tps=60),
    # the week before
    *served("solo", SOLO, LAST_WEEK, 40, ttft_ms=1000, tps=45),
    *served("retired", GPT, LAST_WEEK, 45, ttft_ms=400, tps=90),
    *served("blackwell", GPT, LAST_WEEK, 30, ttft_ms=300, tps=120),
]


def build(path: Path) -> Path:
    ingest_rows(Config(store=path, nodes=NODES), ROWS)
    return path
