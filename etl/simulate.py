"""A simulated lab: LiteLLM spend-log rows as LiteLLM would write them, for demos and tests.

Thirteen people (a professor and twelve students) with their own keys and habits, three
GPU nodes with different serving stacks (vLLM on a Blackwell workstation; llama.cpp on
two L40 servers), coding agents, SDKs and scripts, streaming, reasoning and prefix-cached
tokens, failures, and LiteLLM's own noise (health checks, master-key calls). The rows go
through the ETL's own transform and load, like real ones. Deterministic for a seed.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from etl.config import NodeRule

LAB_TZ = ZoneInfo("Asia/Seoul")


@dataclass(frozen=True)
class Node:
    name: str  # what the lab's configuration calls it
    api_base: str
    model: str  # LiteLLM's model string
    model_group: str
    model_id: str
    provider: str
    tokens_per_s: float
    prefill_per_s: float
    reasoning: bool


NODES = (
    Node(
        "blackwell-vllm",
        "http://ws-blackwell:8000/v1/chat/completions",
        "hosted_vllm/openai/gpt-oss-120b",
        "gpt-oss-120b",
        "ws-blackwell-gpt-oss-120b",
        "hosted_vllm",
        115.0,
        9000.0,
        True,
    ),
    Node(
        "l40-a-llamacpp",
        "http://l40-a:8080/v1/",
        "openai/qwen3-coder-30b-a3b-instruct-q4_k_m",
        "qwen3-coder-30b",
        "l40-a-qwen3-coder-30b",
        "openai",
        48.0,
        2500.0,
        False,
    ),
    Node(
        "l40-b-llamacpp",
        "http://l40-b:8080/v1",
        "openai/qwen3-coder-30b-a3b-instruct-q4_k_m",
        "qwen3-coder-30b",
        "l40-b-qwen3-coder-30b",
        "openai",
        44.0,
        2400.0,
        False,
    ),
)
CLIENTS = {
    "opencode": "opencode/0.15.2 ai-sdk/provider-utils/3.0.10",
    "hermes": "Hermes-Agent/1.4 (linux)",
    "claude": "claude-cli/2.0.14 (external, cli)",
    "sdk": "OpenAI/Python 1.99.0",
    "script": "python-requests/2.32.3",
    "curl": "curl/8.5.0",
    "none": "",
}
AGENTS = {"opencode", "hermes", "claude"}


@dataclass(frozen=True)
class Person:
    user_id: str
    weight: float  # share of the lab's traffic
    clients: tuple[tuple[str, float], ...]
    prefers_blackwell: float


PEOPLE = (
    Person("prof.kim", 0.05, (("sdk", 0.7), ("curl", 0.3)), 0.8),
    Person("minji.park", 0.16, (("opencode", 0.8), ("sdk", 0.2)), 0.7),
    Person("junho.lee", 0.14, (("hermes", 0.85), ("script", 0.15)), 0.6),
    Person("seoyeon.choi", 0.11, (("claude", 0.7), ("sdk", 0.3)), 0.75),
    Person("tomas.weber", 0.10, (("opencode", 0.5), ("script", 0.5)), 0.5),
    Person("priya.nair", 0.09, (("claude", 0.9), ("none", 0.1)), 0.8),
    Person("daeho.kang", 0.08, (("sdk", 0.6), ("none", 0.4)), 0.4),
    Person("yuna.han", 0.07, (("opencode", 0.6), ("hermes", 0.4)), 0.6),
    Person("wei.chen", 0.06, (("script", 0.8), ("sdk", 0.2)), 0.3),
    Person("sora.jung", 0.05, (("claude", 0.5), ("opencode", 0.5)), 0.7),
    Person("ali.hassan", 0.04, (("hermes", 0.6), ("curl", 0.4)), 0.5),
    Person("hyejin.oh", 0.03, (("sdk", 1.0),), 0.5),
    Person("marco.rossi", 0.02, (("opencode", 1.0),), 0.9),
)
MASTER_KEY_HASH = "litellm_proxy_master_key"
HEALTH_CHECK = "litellm-internal-health-check"
INPUT_COST, OUTPUT_COST = 1.5e-7, 6e-7  # the lab's custom prices per token (USD)


def node_rules() -> tuple[NodeRule, ...]:
    """The configuration a lab with these nodes would write."""
    return tuple(
        NodeRule(node.name, api_bases=(node.api_base,), model_ids=(node.model_id,)) for node in NODES
    )


def key_hash(user_id: str, n: int = 0) -> str:
    """The sha256 LiteLLM would store for this person's n-th key (the key itself is made up)."""
    return hashlib.sha256(f"sk-demo-{user_id}-{n}".encode()).hexdigest()


def simulate(
    *, days: float = 30, end: dt.datetime | None = None, per_day: int = 1200, seed: int = 7
) -> Iterator[dict[str, Any]]:
    """LiteLLM spend-log rows for the `days` before `end`, oldest first."""
    rng = random.Random(seed)  # noqa: S311  a simulation, not a secret
    end = (end or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    start = end - dt.timedelta(days=days)
    minute = start.replace(second=0, microsecond=0)
    health_every = dt.timedelta(minutes=15)
    next_health = minute
    while minute < end:
        rate = per_day * _activity(minute) / (24 * 60)
        for _ in range(_poisson(rng, rate)):
            at = minute + dt.timedelta(seconds=rng.uniform(0, 60))
            yield _request(rng, at)
        if minute >= next_health:
            for node in NODES:
                yield _health_check(rng, minute + dt.timedelta(seconds=rng.uniform(0, 5)), node)
            next_health += health_every
        if rng.random() < 0.004:  # the professor's admin scripts use the master key
            yield _master_key_call(rng, minute + dt.timedelta(seconds=rng.uniform(0, 60)))
        minute += dt.timedelta(minutes=1)


def _activity(moment: dt.datetime) -> float:
    """Relative load at this moment: a lab's day in Seoul, quieter at weekends."""
    local = moment.astimezone(LAB_TZ)
    hour = local.hour + local.minute / 60
    day = math.exp(-(((hour - 15.5) / 4.5) ** 2)) + 0.55 * math.exp(-(((hour - 22.5) / 2.2) ** 2)) + 0.04
    return day * (0.45 if local.weekday() >= 5 else 1.0) * 1.6


def _poisson(rng: random.Random, mean: float) -> int:
    limit, count, product = math.exp(-mean), 0, rng.random()
    while product > limit:
        count += 1
        product *= rng.random()
    return count


def _pick(rng: random.Random, weighted: tuple[tuple[str, float], ...]) -> str:
    names = [name for name, _ in weighted]
    return rng.choices(names, [weight for _, weight in weighted])[0]


def _request(rng: random.Random, at: dt.datetime) -> dict[str, Any]:
    person = rng.choices(PEOPLE, [p.weight for p in PEOPLE])[0]
    client = _pick(rng, person.clients)
    node = NODES[0] if rng.random() < person.prefers_blackwell else rng.choice(NODES[1:])
    agent = client in AGENTS
    prompt = int(rng.lognormvariate(math.log(14000 if agent else 1200), 0.7))
    completion = max(4, int(rng.lognormvariate(math.log(450 if agent else 300), 0.8)))
    cached = int(prompt * rng.uniform(0.55, 0.92)) if agent and rng.random() < 0.85 else 0
    reasoning = int(completion * rng.uniform(0.15, 0.45)) if node.reasoning else 0
    streamed = agent or rng.random() < 0.4
    ttft_ms = 120 + (prompt - cached) / node.prefill_per_s * 1000 * rng.uniform(0.8, 1.6)
    generation_ms = completion / node.tokens_per_s * 1000 * rng.uniform(0.85, 1.3)
    failure = _failure(rng, node)
    row = _base(rng, at, person.user_id, key_hash(person.user_id, 0 if rng.random() < 0.8 else 1), client)
    if failure == "before_routing":
        return row | _failed(row, "ProxyModelNotFoundError", "400", "", prompt_estimate=12, duration_ms=25)
    if failure == "after_routing":
        routed = row | _routed(node)
        duration = int(rng.uniform(2000, 30000))
        return routed | _failed(
            routed, "InternalServerError", "500", node.provider, prompt_estimate=15, duration_ms=duration
        )
    duration = int(ttft_ms + generation_ms)
    end = at + dt.timedelta(milliseconds=duration)
    first = at + dt.timedelta(milliseconds=int(ttft_ms)) if streamed else end
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning} if node.reasoning else None,
    }
    row["metadata"] |= {
        "usage_object": usage,
        "additional_usage_values": {"cache_read_input_tokens": cached} if cached else {},
    }
    return (
        row
        | _routed(node)
        | {
            "endTime": end,
            "completionStartTime": first,
            "request_duration_ms": duration,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "spend": prompt * INPUT_COST + completion * OUTPUT_COST,
            "status": "success",
        }
    )


def _failure(rng: random.Random, node: Node) -> str | None:
    roll = rng.random()
    if roll < 0.006:
        return "before_routing"
    if roll < 0.006 + (0.035 if node.provider == "openai" else 0.012):
        return "after_routing"
    return None


def _base(rng: random.Random, at: dt.datetime, user_id: str, api_key: str, client: str) -> dict[str, Any]:
    agent = CLIENTS[client]
    product = agent.split("/", 1)[0]
    return {
        "request_id": f"chatcmpl-{uuid.UUID(int=rng.getrandbits(128)).hex}",
        "call_type": "anthropic_messages" if client == "claude" else "acompletion",
        "api_key": api_key,
        "cache_hit": "None",
        "startTime": _naive(at),
        "endTime": _naive(at),
        "completionStartTime": _naive(at),
        "model": "",
        "model_group": "",
        "model_id": "",
        "custom_llm_provider": "",
        "api_base": "",
        "user": user_id,
        "team_id": "",
        "end_user": "",
        "session_id": str(uuid.UUID(int=rng.getrandbits(128))),
        "request_tags": [f"User-Agent: {product}", f"User-Agent: {agent}"] if agent else [],
        "metadata": {
            "user_api_key": api_key,
            "user_api_key_alias": _alias(user_id, client),
            "user_api_key_user_id": user_id,
            "user_agent": agent,
            "status": None,
            "error_information": None,
        },
        "spend": 0.0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "total_tokens": 0,
    }


def _alias(user_id: str, client: str) -> str:
    first = user_id.split(".", maxsplit=1)[0]
    return f"{first}-{'key' if client == 'none' else client}"


def _routed(node: Node) -> dict[str, Any]:
    return {
        "model": node.model,
        "model_group": node.model_group,
        "model_id": node.model_id,
        "custom_llm_provider": node.provider,
        "api_base": node.api_base,
    }


def _failed(
    row: dict[str, Any], error_class: str, code: str, provider: str, *, prompt_estimate: int, duration_ms: int
) -> dict[str, Any]:
    start = row["startTime"]
    end = start + dt.timedelta(milliseconds=duration_ms)
    metadata = row["metadata"] | {
        "status": "failure",
        "error_information": {"error_class": error_class, "error_code": code, "llm_provider": provider},
    }
    return {
        "status": "failure",
        "endTime": end,
        "completionStartTime": end,
        "request_duration_ms": duration_ms,
        "prompt_tokens": prompt_estimate,
        "total_tokens": prompt_estimate,
        "metadata": metadata,
        "model": row["model"] or "unknown-model",
    }


def _health_check(rng: random.Random, at: dt.datetime, node: Node) -> dict[str, Any]:
    row = _base(rng, at, "", HEALTH_CHECK, "none") | _routed(node) | {"model_group": "", "model_id": ""}
    row["team_id"] = HEALTH_CHECK
    row["request_tags"] = [HEALTH_CHECK]
    row["metadata"] = {"user_api_key": HEALTH_CHECK, "user_api_key_team_id": HEALTH_CHECK}
    duration = int(rng.uniform(300, 900))
    row["endTime"] = row["completionStartTime"] = row["startTime"] + dt.timedelta(milliseconds=duration)
    return row | {"prompt_tokens": 16, "completion_tokens": 8, "total_tokens": 24, "status": "success"}


def _master_key_call(rng: random.Random, at: dt.datetime) -> dict[str, Any]:
    row = _base(rng, at, "default_user_id", MASTER_KEY_HASH, "sdk") | _routed(NODES[0])
    row["metadata"]["user_api_key_user_id"] = "default_user_id"
    row["metadata"]["user_api_key_alias"] = None
    duration = int(rng.uniform(400, 2000))
    row["endTime"] = row["completionStartTime"] = row["startTime"] + dt.timedelta(milliseconds=duration)
    return row | {"prompt_tokens": 60, "completion_tokens": 40, "total_tokens": 100, "status": "success"}


def _naive(moment: dt.datetime) -> dt.datetime:
    """LiteLLM stores naive UTC."""
    return moment.astimezone(dt.UTC).replace(tzinfo=None)
