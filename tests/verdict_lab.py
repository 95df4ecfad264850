"""A lab of seven GPU nodes whose verdicts are known (issue 28): over the week of Dec 1-8
(UTC), the week before it as the period to compare with.

- blackwell, spark: gpt-oss-120b; spark fails 1 request in 5 this week: failing
- l40-a, l40-c: qwen3-coder-30b at p95 time to first token ~0.5 s, ~60 tok/s: good
- l40-b: the same model at ~12 s and ~15 tok/s: slow (against l40-a and l40-c)
- solo: the only node of its model, 5x slower than the week before: slow (against itself)
- retired: served last week, nothing this week: down
- tiny: 5 requests this week: too few to judge

And its people (issue 28's glance block): user3 spends the most, mostly through Claude
Code; LiteLLM's key list (copied at the week's end) holds three keys over budget, three at
risk and one within; priya was refused 41 times for her budget, user2 3 times for a rate
limit.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from etl.run import ingest_rows
from queries.filters import Filters
from settings.config import Config, NodeRule
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
        user = f"user{i % 4}"
        decode_ms = int(600 / tps * 1000)
        kind = "failure_after_routing" if i >= n - failed else "vllm_streamed_reasoning_cached"
        row = known_store.request(
            kind,
            user,
            start + dt.timedelta(minutes=i),
            request_id=f"{node}-{model}-{start:%m%d}-{i}",
            usage=None if kind.startswith("failure") else (1000, 0, 600, 0),
            duration_ms=ttft_ms + decode_ms,
            ttft_ms=None if kind.startswith("failure") else ttft_ms,
            api_base=f"http://{node}:8000/v1/chat/completions",
            model_group=model,
            spend=0.001 * (1 + i % 4),
            user_agent=agent(i),
        )
        rows.append(row)
    return rows


# user3's requests: mostly Claude Code (4 in 5), the rest OpenCode
AGENTS = (
    "opencode/0.15.2",
    "claude-cli/2.0.14 (external, cli)",
    "hermes-agent/0.4",
    "python-requests/2.32.3",
)


def agent(i: int) -> str:
    if i % 4 == 3:  # user3: Claude Code 4 times in 5, else OpenCode
        return AGENTS[0] if (i // 4) % 5 == 0 else AGENTS[1]
    return AGENTS[i % 4]


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


COPIED = dt.datetime(2026, 12, 8, tzinfo=UTC)  # when the ETL copied LiteLLM's key list: the week's end


def refused_for_budget(user: str, start: dt.datetime) -> dict[str, Any]:
    """LiteLLM's BudgetExceededError row (1.110.2): never routed, no tokens."""
    row = known_store.request("failure_before_routing", user, start, duration_ms=4)
    row["metadata"]["error_information"] = {
        "error_code": "400",
        "error_class": "BudgetExceededError",
        "llm_provider": "",
        "traceback": "",
        "error_message": "Budget has been exceeded! Current cost: 2.01, Max budget: 2.0",
        "normalized_error": "429_BUDGET_EXCEEDED",
        "error_rate_limit_type": "budget",
    }
    return row


def refused_for_rate(user: str, start: dt.datetime) -> dict[str, Any]:
    row = known_store.request("failure_before_routing", user, start, duration_ms=3)
    row["metadata"]["error_information"] = {
        "error_code": "429",
        "error_class": "ProxyRateLimitError",
        "llm_provider": "",
        "traceback": "",
        "error_message": "Rate limit exceeded for api_key: REDACTED. Limit type: tokens.",
        "error_rate_limit_type": "tokens",
    }
    return row


REFUSALS = [
    *(refused_for_budget("priya", THIS_WEEK + dt.timedelta(hours=3, minutes=i)) for i in range(41)),
    *(refused_for_rate("user2", THIS_WEEK + dt.timedelta(hours=4, minutes=i)) for i in range(3)),
]


def keys_table() -> Any:
    """LiteLLM's key list at the week's end: over budget user0, shared-gpu and priya; at
    risk user1 (runs out 7.5 days after the copy, its reset 25 days after), user2 (85 %) and
    ta (85 %); user3 within its budget."""
    import pyarrow as pa

    from contract.store import KEYS_SCHEMA

    soon = COPIED + dt.timedelta(days=25)

    def key(name: str, owner: str | None, **values: Any) -> dict[str, Any]:
        row: dict[str, Any] = dict.fromkeys(KEYS_SCHEMA.names)
        defaults = {
            "api_key_hash": known_store.key_of(name),
            "key_name": f"sk-...{name[-4:]}",
            "key_alias": f"{name}-laptop",
            "user_id": owner,
            "spend": 0.0,
            "blocked": False,
            "snapshot_at": COPIED,
        }
        return row | defaults | values

    rows = [
        key("user0", "user0", spend=12.0, max_budget=10.0),
        key("user1", "user1", spend=4.0, max_budget=10.0, budget_duration="30d", budget_reset_at=soon),
        key("user2", "user2", spend=8.5, max_budget=10.0),
        key("user3", "user3", spend=1.0, max_budget=100.0, budget_duration="30d", budget_reset_at=soon),
        key("shared", None, key_alias="shared-gpu", spend=5.2, max_budget=5.0),
        key("ta", "ta", key_alias="ta-notebook", spend=17.0, max_budget=20.0),
        key("priya", "priya", key_alias="priya-claude", spend=2.01, max_budget=2.0),
    ]
    return pa.Table.from_pylist(rows, schema=KEYS_SCHEMA)


def build(path: Path, *, keys: bool = True) -> Path:
    """The lab's store; with `keys`, also its key list and the refusals of the week."""
    from contract.store import KEYS_FILE
    from etl.load import write_snapshot

    ingest_rows(Config(store=path, nodes=NODES), ROWS + (REFUSALS if keys else []))
    if keys:
        write_snapshot(path / KEYS_FILE, keys_table())
    return path
