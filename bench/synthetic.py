"""Synthetic LiteLLM spend logs at scale, generated inside PostgreSQL.

Rows carry the metadata LiteLLM 1.110 really writes (~11 KB of JSON, most of it the
model's cost map, TOASTed), so that extraction is measured against what a lab's table
holds: a benchmark on small metadata flatters the extraction. A lab of 40 students,
three GPU nodes, six clients, 3 % failures and 2 % LiteLLM noise, over `days` days.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

SAMPLES = Path(__file__).resolve().parent.parent / "tests" / "data" / "sample_spend_logs.jsonl"

_INSERT = """
WITH draw AS (
    SELECT g,
           floor(pow(random(), 2) * 40)::int AS u,
           random() AS r_node, random() AS r_client, random() AS r_fail, random() AS r_noise,
           random() AS r_stream, random() AS r_cache,
           (200 + floor(random() * 8000))::int AS prompt,
           (20 + floor(random() * 1500))::int AS completion,
           -- in insertion order, as LiteLLM writes them, with a few minutes of jitter
           %(end)s::timestamp - %(days)s * interval '1 day' * (1 - (g - %(first)s)::float8 / %(n)s)
               - random() * interval '5 minutes' AS st
    FROM generate_series(%(lo)s::bigint, %(hi)s::bigint) g
), shaped AS (
    SELECT d.*,
           CASE WHEN r_noise < 0.01 THEN 'health' WHEN r_noise < 0.02 THEN 'master' ELSE 'user' END AS kind,
           CASE WHEN r_node < 0.6 THEN 0 WHEN r_node < 0.85 THEN 1 ELSE 2 END AS node,
           CASE WHEN r_client < 0.25 THEN 'opencode/0.15.2 ai-sdk/provider-utils/3.0.10'
                WHEN r_client < 0.45 THEN 'Hermes-Agent/1.4 (linux)'
                WHEN r_client < 0.60 THEN 'claude-cli/2.0.14 (external, cli)'
                WHEN r_client < 0.80 THEN 'OpenAI/Python 1.99.0'
                WHEN r_client < 0.92 THEN 'python-requests/2.32.3'
                ELSE '' END AS ua,
           r_fail < 0.03 AS failed,
           'student' || lpad(u::text, 2, '0') AS uid
    FROM draw d
), timed AS (
    SELECT s.*,
           CASE WHEN failed THEN 0 ELSE completion END AS out_tokens,
           CASE WHEN node = 0 THEN 120.0 ELSE 45.0 END AS speed,
           (0.15 + random() * 1.5) * interval '1 second' AS ttft
    FROM shaped s
)
INSERT INTO "LiteLLM_SpendLogs" (
    request_id, call_type, api_key, spend, total_tokens, prompt_tokens, completion_tokens,
    "startTime", "endTime", "completionStartTime", model, model_id, model_group,
    custom_llm_provider, api_base, "user", metadata, cache_hit, cache_key, request_tags,
    team_id, end_user, requester_ip_address, session_id, status, request_duration_ms,
    created_at, updated_at
)
SELECT
    'bench-' || lpad(g::text, 10, '0'),
    'acompletion',
    CASE kind WHEN 'health' THEN 'litellm-internal-health-check'
              WHEN 'master' THEN 'litellm_proxy_master_key'
              ELSE encode(sha256(convert_to('sk-key-' || u, 'UTF8')), 'hex') END,
    CASE WHEN failed THEN 0 ELSE (prompt * 1.5e-7 + out_tokens * 6e-7) END,
    prompt + out_tokens, prompt, out_tokens,
    st,
    st + ttft + (out_tokens / speed) * interval '1 second',
    CASE WHEN r_stream < 0.8 AND NOT failed THEN st + ttft
         ELSE st + ttft + (out_tokens / speed) * interval '1 second' END,
    (ARRAY['hosted_vllm/openai/gpt-oss-120b', 'openai/qwen3-coder-30b-a3b-instruct-q4_k_m',
           'openai/qwen3-coder-30b-a3b-instruct-q4_k_m'])[node + 1],
    (ARRAY['ws-blackwell-gpt-oss-120b', 'l40-a-qwen3-coder-30b', 'l40-b-qwen3-coder-30b'])[node + 1],
    (ARRAY['gpt-oss-120b', 'qwen3-coder-30b', 'qwen3-coder-30b'])[node + 1],
    (ARRAY['hosted_vllm', 'openai', 'openai'])[node + 1],
    (ARRAY['http://ws-blackwell:8000/v1/chat/completions', 'http://l40-a:8080/v1/',
           'http://l40-b:8080/v1'])[node + 1],
    CASE kind WHEN 'health' THEN '' WHEN 'master' THEN 'default_user_id' ELSE uid END,
    tpl.md || jsonb_build_object(
        'user_api_key_user_id',
            CASE kind WHEN 'health' THEN NULL WHEN 'master' THEN 'default_user_id' ELSE uid END,
        'user_api_key_alias', CASE kind WHEN 'user' THEN uid || '-laptop' END,
        'user_agent', ua,
        'status', CASE WHEN failed THEN 'failure' END,
        'error_information', CASE WHEN failed THEN jsonb_build_object(
            'error_class', 'InternalServerError', 'error_code', '500') END,
        'usage_object', jsonb_build_object(
            'prompt_tokens', prompt, 'completion_tokens', out_tokens, 'total_tokens', prompt + out_tokens,
            'prompt_tokens_details', jsonb_build_object(
                'cached_tokens', CASE WHEN r_cache < 0.5 THEN floor(prompt * r_cache)::int ELSE 0 END),
            'completion_tokens_details', jsonb_build_object(
                'reasoning_tokens', CASE WHEN node = 0 THEN floor(out_tokens * 0.3)::int ELSE 0 END)),
        'additional_usage_values', jsonb_build_object(
            'cache_read_input_tokens', CASE WHEN r_cache < 0.5 THEN floor(prompt * r_cache)::int ELSE 0 END)
    ),
    'False', 'Cache OFF',
    CASE WHEN kind = 'health' THEN '["litellm-internal-health-check"]'::jsonb
         WHEN ua = '' THEN '[]'::jsonb
         ELSE jsonb_build_array('User-Agent: ' || split_part(ua, '/', 1), 'User-Agent: ' || ua) END,
    CASE kind WHEN 'health' THEN 'litellm-internal-health-check' ELSE '' END,
    '', '10.20.0.' || (20 + u), md5(g::text),
    CASE WHEN failed THEN 'failure' ELSE 'success' END,
    floor(extract(epoch FROM ttft + (out_tokens / speed) * interval '1 second') * 1000)::int,
    st + ttft + (out_tokens / speed) * interval '1 second' + interval '12 seconds',
    st + ttft + (out_tokens / speed) * interval '1 second' + interval '12 seconds'
FROM timed, (SELECT %(template)s::jsonb AS md) tpl
"""


def metadata_template() -> dict[str, Any]:
    """The metadata of a real vLLM row (LiteLLM 1.108.7), with its 8 KB cost map."""
    for line in SAMPLES.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["_kind"] == "vllm_streamed_reasoning_cached":
            metadata: dict[str, Any] = row["metadata"]
            return metadata
    raise LookupError("no vLLM sample row")


def insert_synthetic(
    conn: psycopg.Connection[Any],
    n: int,
    *,
    first_id: int = 1,
    end: dt.datetime | None = None,
    days: float = 30,
    batch: int = 50_000,
    report: Callable[[str], None] | None = None,
) -> None:
    """Insert `n` requests with startTime in the `days` before `end` (naive UTC)."""
    end = end or dt.datetime.now(dt.UTC).replace(tzinfo=None)
    template = json.dumps(metadata_template())
    began = time.monotonic()
    conn.execute("SELECT setseed(0.42)")
    for lo in range(first_id, first_id + n, batch):
        hi = min(lo + batch - 1, first_id + n - 1)
        values = {
            "lo": lo,
            "hi": hi,
            "first": first_id,
            "n": n,
            "end": end,
            "days": days,
            "template": template,
        }
        conn.execute(_INSERT, values)
        conn.commit()
        if report:
            done = hi - first_id + 1
            report(f"  inserted {done:,}/{n:,} rows ({done / (time.monotonic() - began):,.0f} rows/s)")
