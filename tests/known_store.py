"""A small store whose every number is known: five requests around midnight in Seoul.

The lab's day in Seoul (UTC+9) starts at 15:00 UTC; the rows straddle that line.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any

from queries.filters import Filters
from settings.config import NodeRule
from tests.litellm_db import spend_log

UTC = dt.UTC
SEOUL = "Asia/Seoul"
NODES = (
    NodeRule("blackwell", api_bases=("ws-blackwell:8000",)),
    NodeRule("l40-a", api_bases=("l40-a:8080",)),
)


def raw_key(name: str) -> str:
    """The made-up virtual key a person of this store signs in with."""
    return f"sk-{name}"


def key_of(name: str) -> str:
    return hashlib.sha256(raw_key(name).encode()).hexdigest()


def request(kind: str, user: str, start: dt.datetime, **kw: Any) -> dict[str, Any]:
    """A LiteLLM row of `kind` for `user`; `ttft_ms`/`duration_ms` place its timestamps."""
    duration = kw.pop("duration_ms")
    ttft = kw.pop("ttft_ms", None)
    usage = kw.pop("usage", None)
    end = start + dt.timedelta(milliseconds=duration)
    metadata: dict[str, Any] = {"user_api_key_user_id": user, "user_api_key_alias": f"{user}-laptop"}
    if usage is not None:
        prompt, cached, completion, reasoning = usage
        details = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": reasoning},
        }
        metadata |= {"usage_object": details, "additional_usage_values": None}
        kw |= {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if "user_agent" in kw:
        metadata["user_agent"] = kw.pop("user_agent")
    if "routing" in kw:  # as LiteLLM's router writes it (>= 1.100)
        fallbacks, retries, overhead, asked_for = kw.pop("routing")
        metadata |= {
            "attempted_fallbacks": fallbacks,
            "attempted_retries": retries,
            "litellm_overhead_time_ms": overhead,
            "original_model_group": asked_for,
        }
    key = key_of(user)  # one key per person
    metadata["user_api_key"] = key
    row = spend_log(
        kind, start=start, user=user, api_key=key, metadata=metadata, request_duration_ms=duration, **kw
    )
    row["endTime"] = end
    row["completionStartTime"] = start + dt.timedelta(milliseconds=ttft) if ttft is not None else end
    return row


ROWS = [
    # KST Nov 20, 23:30 (UTC Nov 20 14:30): the previous day in Seoul
    request(
        "vllm_streamed_reasoning_cached",
        "alice",
        dt.datetime(2026, 11, 20, 14, 30),
        request_id="a1",
        user_agent="opencode/0.15.2",
        usage=(1000, 200, 300, 100),
        spend=0.010,
        duration_ms=2000,
        ttft_ms=500,
    ),
    # KST Nov 21, 00:30 (UTC still Nov 20)
    request(
        "vllm_streamed_reasoning_cached",
        "alice",
        dt.datetime(2026, 11, 20, 15, 30),
        request_id="b1",
        user_agent="claude-cli/2.0.14 (external, cli)",
        usage=(2000, 1000, 400, 0),
        spend=0.020,
        duration_ms=4000,
        ttft_ms=800,
    ),
    # KST Nov 21, 08:30: failed before routing: no api_base, no user agent, no tokens
    request(
        "failure_before_routing", "bob", dt.datetime(2026, 11, 20, 23, 30), request_id="c1", duration_ms=24
    ),
    # KST Nov 21, 10:00 (UTC Nov 21): llama.cpp, not streamed
    request(
        "llamacpp_non_streamed",
        "bob",
        dt.datetime(2026, 11, 21, 1, 0),
        request_id="d1",
        user_agent="python-requests/2.32.3",
        usage=(1973, 0, 576, 0),
        spend=0.00025662,
        duration_ms=12033,
        # the Blackwell's group failed twice, then its fallback on the L40 served it
        routing=(1, 2, 12.5, "gpt-oss-120b"),
    ),
    # KST Nov 19, 19:00: outside every range below
    request(
        "vllm_streamed_reasoning_cached",
        "carol",
        dt.datetime(2026, 11, 19, 10, 0),
        request_id="e1",
        duration_ms=1640,
        ttft_ms=545,
    ),
    # LiteLLM's own noise, inside the range: never counted
    spend_log("health_check", start=dt.datetime(2026, 11, 21, 2, 0)),
    spend_log("master_key", start=dt.datetime(2026, 11, 21, 3, 0)),
]

KST_NOV_21 = Filters(
    start=dt.datetime(2026, 11, 20, 15, 0, tzinfo=UTC),
    end=dt.datetime(2026, 11, 21, 15, 0, tzinfo=UTC),
    tz=SEOUL,
)


def keys_table() -> Any:
    """LiteLLM's key list for the store: alice has two keys (one unused) and a budget
    tier, bob is close to his budget, carol's key has expired, dave's is blocked."""
    import pyarrow as pa

    from contract.store import KEYS_SCHEMA

    reset = dt.datetime(2026, 12, 15, tzinfo=UTC)
    snapshot = dt.datetime(2026, 12, 1, tzinfo=UTC)

    def key(name: str, owner: str, **values: Any) -> dict[str, Any]:
        row: dict[str, Any] = dict.fromkeys(KEYS_SCHEMA.names)
        return (
            row
            | {
                "api_key_hash": key_of(name),
                "key_name": f"sk-...{name[-4:]}",
                "key_alias": f"{name}-laptop",
                "user_id": owner,
                "spend": 0.0,
                "blocked": False,
                "snapshot_at": snapshot,
            }
            | values
        )

    rows = [
        key(
            "alice",
            "alice",
            spend=3.25,
            max_budget=10.0,
            budget_duration="30d",
            budget_reset_at=reset,
            tpm_limit=20_000,
            rpm_limit=60,
        ),
        key("alice-2", "alice", key_alias="alice-jupyter", spend=0.5),
        key("bob", "bob", spend=4.6, max_budget=5.0, budget_duration="30d", budget_reset_at=reset),
        key("carol", "carol", expires=dt.datetime(2026, 1, 1, tzinfo=UTC)),
        key("dave", "dave", blocked=True),
    ]
    return pa.Table.from_pylist(rows, schema=KEYS_SCHEMA)


def users_table() -> Any:
    import pyarrow as pa

    from contract.store import USERS_SCHEMA

    row: dict[str, Any] = dict.fromkeys(USERS_SCHEMA.names)
    alice = row | {
        "user_id": "alice",
        "user_alias": "Alice",
        "spend": 3.75,
        "max_budget": 40.0,
        "snapshot_at": dt.datetime(2026, 12, 1, tzinfo=UTC),
    }
    return pa.Table.from_pylist([alice], schema=USERS_SCHEMA)


def build(path: Path, *, keys: bool = True) -> Path:
    """Write the known rows into a store at `path` with the ETL's own ingest, and (unless
    `keys` is False) LiteLLM's key and user lists as an ETL run would snapshot them."""
    from contract.store import KEYS_FILE, USERS_FILE
    from etl.load import write_snapshot
    from etl.run import ingest_rows
    from settings.config import Config

    ingest_rows(Config(store=path, nodes=NODES), ROWS)
    if keys:
        write_snapshot(path / KEYS_FILE, keys_table())
        write_snapshot(path / USERS_FILE, users_table())
    return path
