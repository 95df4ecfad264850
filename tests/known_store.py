"""A small store whose every number is known: five requests around midnight in Seoul.

The lab's day in Seoul (UTC+9) starts at 15:00 UTC; the rows straddle that line.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any

from etl.config import NodeRule
from queries.filters import Filters
from tests.litellm_db import spend_log

UTC = dt.UTC
SEOUL = "Asia/Seoul"
NODES = (
    NodeRule("blackwell", api_bases=("ws-blackwell:8000",)),
    NodeRule("l40-a", api_bases=("l40-a:8080",)),
)


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
    key = hashlib.sha256(f"sk-{user}".encode()).hexdigest()  # one key per person
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


def build(path: Path) -> Path:
    """Write the known rows into a store at `path` with the ETL's own ingest."""
    from etl.config import Config
    from etl.run import ingest_rows

    ingest_rows(Config(store=path, nodes=NODES), ROWS)
    return path
