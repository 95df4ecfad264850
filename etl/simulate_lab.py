"""The simulated lab, described: its three GPU nodes and the four deployments they serve
(speed, prefix cache, slots, fallback), the clients and the thirteen people who use them,
the lab's prices, its node rules, its people's key hashes, and when the main node is down
(`outage`). Data the simulation draws on, and the demo and the tests name."""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from settings.config import NodeRule

LAB_TZ = ZoneInfo("Asia/Seoul")


@dataclass(frozen=True)
class Deployment:
    """One model served on one node, as LiteLLM's model list names it."""

    node: str  # what the lab's configuration calls the machine
    api_base: str
    model: str  # LiteLLM's model string
    model_group: str
    model_id: str
    provider: str
    tokens_per_s: float
    prefill_per_s: float
    reasoning: bool
    # share of a prompt the server finds in its prefix cache when it finds any, and how
    # often it does for a coding agent's repeated prompt and for anything else
    prefix_cache: tuple[float, float]
    cache_hits: tuple[float, float]
    # prompt tokens past 2k over which the request takes one more time as long
    long_prompt_knee: float
    slots: int  # requests served at once; more wait for a slot
    fallback: str | None = None  # the model group LiteLLM falls back to


GPT_OSS = Deployment(
    "blackwell-vllm",
    "http://ws-blackwell:8000/v1/chat/completions",
    "hosted_vllm/openai/gpt-oss-120b",
    "gpt-oss-120b",
    "ws-blackwell-gpt-oss-120b",
    "hosted_vllm",
    115.0,
    9000.0,
    reasoning=True,
    prefix_cache=(0.9, 0.99),
    cache_hits=(0.99, 0.7),
    long_prompt_knee=200000.0,
    slots=32,
    fallback="qwen3-coder-30b",
)
# A hybrid Mamba-Transformer model: vLLM's prefix cache block for it is larger than the
# agents' prompts change by, so it never reports a cached token.
NEMOTRON = Deployment(
    "blackwell-vllm",
    "http://ws-blackwell:8001/v1/chat/completions",
    "hosted_vllm/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8",
    "nemotron-3-nano",
    "ws-blackwell-nemotron-3-nano",
    "hosted_vllm",
    170.0,
    14000.0,
    reasoning=True,
    prefix_cache=(0.0, 0.0),
    cache_hits=(0.0, 0.0),
    long_prompt_knee=200000.0,
    slots=32,
)
L40_A = Deployment(
    "l40-a-llamacpp",
    "http://l40-a:8080/v1/",
    "openai/qwen3-coder-30b-a3b-instruct-q4_k_m",
    "qwen3-coder-30b",
    "l40-a-qwen3-coder-30b",
    "openai",
    48.0,
    2500.0,
    reasoning=False,
    prefix_cache=(0.55, 0.92),
    cache_hits=(0.85, 0.0),
    long_prompt_knee=40000.0,
    slots=4,
)
# Its KV cache spills to system memory past a few thousand tokens of context: long
# prompts take several times as long there.
L40_B = Deployment(
    "l40-b-llamacpp",
    "http://l40-b:8080/v1",
    "openai/qwen3-coder-30b-a3b-instruct-q4_k_m",
    "qwen3-coder-30b",
    "l40-b-qwen3-coder-30b",
    "openai",
    44.0,
    2400.0,
    reasoning=False,
    prefix_cache=(0.55, 0.92),
    cache_hits=(0.85, 0.0),
    long_prompt_knee=5000.0,
    slots=4,
)
DEPLOYMENTS = (GPT_OSS, NEMOTRON, L40_A, L40_B)
NODES = tuple(dict.fromkeys(d.node for d in DEPLOYMENTS))  # the main node first, then the backups
MAX_RETRIES = 2  # the router's num_retries
OUTAGE_HOURS = 3.75
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
        NodeRule(
            node,
            api_bases=tuple(d.api_base for d in DEPLOYMENTS if d.node == node),
            model_ids=tuple(d.model_id for d in DEPLOYMENTS if d.node == node),
        )
        for node in NODES
    )


def key_hash(user_id: str, n: int = 0) -> str:
    """The sha256 LiteLLM would store for this person's n-th key (the key itself is made up)."""
    return hashlib.sha256(f"sk-demo-{user_id}-{n}".encode()).hexdigest()


def outage(end: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    """When the main node is down: an afternoon in Seoul two days before `end` (UTC times)."""
    local = end.astimezone(LAB_TZ) - dt.timedelta(days=2)
    start = local.replace(hour=13, minute=40, second=0, microsecond=0).astimezone(dt.UTC)
    return start, start + dt.timedelta(hours=OUTAGE_HOURS)
