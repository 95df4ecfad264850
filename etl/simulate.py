"""A simulated lab: LiteLLM spend-log rows as LiteLLM would write them, for demos and tests.

Thirteen people (a professor and twelve students) with their own keys and habits, three
GPU nodes with different serving stacks (vLLM on a Blackwell workstation, the main node;
llama.cpp on two L40 servers, the backups, routed least-busy), coding agents, SDKs and
scripts, streaming, reasoning and prefix-cached tokens, failures, and LiteLLM's own noise
(health checks, master-key calls). The rows go through the ETL's own transform and load,
like real ones. Deterministic for a seed.

So that every view of the Nodes page has something to show: one model on the main node
never hits its prefix cache and the other nearly always does; one backup slows sharply
with long prompts; evaluation scripts' batches load the nodes past their slots; and one
afternoon two days before the end the main node is down (`outage`): requests fail or fall
back to the backups, with the router's notes in the metadata as LiteLLM writes them.

This module makes the rows (`simulate`); the lab they come from (nodes, deployments,
people, clients, prices) is described in simulate_lab.py and re-exported from here.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import uuid
from collections.abc import Iterator
from typing import Any

from etl.simulate_lab import (
    AGENTS,
    CLIENTS,
    DEPLOYMENTS,
    GPT_OSS,
    HEALTH_CHECK,
    INPUT_COST,
    L40_A,
    L40_B,
    LAB_TZ,
    MASTER_KEY_HASH,
    MAX_RETRIES,
    NEMOTRON,
    NODES,
    OUTAGE_HOURS,
    OUTPUT_COST,
    PEOPLE,
    Deployment,
    Person,
    key_hash,
    node_rules,
    outage,
)

__all__ = [
    "AGENTS",
    "CLIENTS",
    "DEPLOYMENTS",
    "GPT_OSS",
    "HEALTH_CHECK",
    "INPUT_COST",
    "L40_A",
    "L40_B",
    "LAB_TZ",
    "MASTER_KEY_HASH",
    "MAX_RETRIES",
    "NEMOTRON",
    "NODES",
    "OUTAGE_HOURS",
    "OUTPUT_COST",
    "PEOPLE",
    "Deployment",
    "Person",
    "key_hash",
    "node_rules",
    "outage",
    "simulate",
]


class _Lab:
    """What a request meets when it arrives: the requests each node is busy with, and
    whether the main node is down."""

    def __init__(self, end: dt.datetime) -> None:
        self.busy: dict[str, list[dt.datetime]] = {node: [] for node in NODES}
        self.down = outage(end)

    def in_flight(self, node: str, at: dt.datetime) -> int:
        self.busy[node] = [t for t in self.busy[node] if t > at]
        return len(self.busy[node])

    def is_down(self, deployment: Deployment, at: dt.datetime) -> bool:
        return deployment.node == NODES[0] and self.down[0] <= at < self.down[1]

    def least_busy(self, rng: random.Random, group: str, at: dt.datetime) -> Deployment:
        """LiteLLM's least-busy routing among the deployments of a model group."""
        candidates = [d for d in DEPLOYMENTS if d.model_group == group and not self.is_down(d, at)]
        rng.shuffle(candidates)
        return min(candidates, key=lambda d: self.in_flight(d.node, at))


def simulate(
    *, days: float = 30, end: dt.datetime | None = None, per_day: int = 1200, seed: int = 7
) -> Iterator[dict[str, Any]]:
    """LiteLLM spend-log rows for the `days` before `end`, oldest first."""
    rng = random.Random(seed)  # noqa: S311  a simulation, not a secret
    end = (end or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    start = end - dt.timedelta(days=days)
    lab = _Lab(end)
    minute = start.replace(second=0, microsecond=0)
    health_every = dt.timedelta(minutes=15)
    next_health = minute
    while minute < end:
        activity = _activity(minute)
        for _ in range(_poisson(rng, per_day * activity / (24 * 60))):
            person = rng.choices(PEOPLE, [p.weight for p in PEOPLE])[0]
            at = minute + dt.timedelta(seconds=rng.uniform(0, 60))
            yield _request(rng, lab, at, person, _pick(rng, person.clients))
        if rng.random() < 0.004 * activity:  # an evaluation script sends a batch at once
            yield from _batch(rng, lab, minute + dt.timedelta(seconds=rng.uniform(0, 50)))
        if minute >= next_health:
            for node in NODES:  # the first model of each node
                deployment = next(d for d in DEPLOYMENTS if d.node == node)
                at = minute + dt.timedelta(seconds=rng.uniform(0, 5))
                if not lab.is_down(deployment, at):
                    yield _health_check(rng, at, deployment)
            next_health += health_every
        if rng.random() < 0.004:  # the professor's admin scripts use the master key
            yield _master_key_call(rng, minute + dt.timedelta(seconds=rng.uniform(0, 60)))
        minute += dt.timedelta(minutes=1)


def _batch(rng: random.Random, lab: _Lab, at: dt.datetime) -> Iterator[dict[str, Any]]:
    """An evaluation script's batch: one model asked many things at once, answers streamed."""
    person = next(p for p in PEOPLE if p.user_id == "wei.chen")
    group = GPT_OSS.model_group if rng.random() < 0.3 else L40_A.model_group
    for _ in range(rng.randint(8, 20)):
        at += dt.timedelta(milliseconds=rng.uniform(20, 400))
        yield _request(rng, lab, at, person, "script", batch=group)


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


def _request(
    rng: random.Random, lab: _Lab, at: dt.datetime, person: Person, client: str, *, batch: str | None = None
) -> dict[str, Any]:
    agent = client in AGENTS
    if batch is not None:
        asked = GPT_OSS if batch == GPT_OSS.model_group else lab.least_busy(rng, batch, at)
    elif rng.random() < person.prefers_blackwell:
        asked = NEMOTRON if rng.random() < (0.3 if agent else 0.12) else GPT_OSS
    else:
        asked = lab.least_busy(rng, L40_A.model_group, at)
    prompt = int(rng.lognormvariate(math.log(14000 if agent else 1200), 0.7))
    completion = max(4, int(rng.lognormvariate(math.log(450 if agent else 300), 0.8)))
    row = _base(rng, at, person.user_id, key_hash(person.user_id, 0 if rng.random() < 0.8 else 1), client)
    failure = _failure(rng, asked)
    if failure == "before_routing":
        return row | _failed(row, "ProxyModelNotFoundError", "400", "", prompt_estimate=12, duration_ms=25)
    deployment, fallbacks = asked, 0
    if lab.is_down(asked, at):
        if asked.fallback is None or rng.random() < 0.1:  # no fallback, or the fallback failed too
            return _unreachable(rng, row, asked)
        deployment, fallbacks = lab.least_busy(rng, asked.fallback, at), 1
    routing = _routing(rng, asked, fallbacks=fallbacks)
    if failure == "after_routing":
        routed = row | _routed(asked)
        routed["metadata"] |= routing | {"attempted_retries": MAX_RETRIES, "litellm_overhead_time_ms": None}
        duration = int(rng.uniform(2000, 30000))
        return routed | _failed(
            routed, "InternalServerError", "500", asked.provider, prompt_estimate=15, duration_ms=duration
        )
    low, high = deployment.prefix_cache
    hits = deployment.cache_hits[0 if agent else 1]
    cached = int(prompt * rng.uniform(low, high)) if rng.random() < hits else 0
    reasoning = int(completion * rng.uniform(0.15, 0.45)) if deployment.reasoning else 0
    streamed = agent or batch is not None or rng.random() < 0.4
    busy = lab.in_flight(deployment.node, at)
    # long prompts stretch prefill and decoding; every request a node serves at once slows
    # the others' decoding a little, and past its slots a request waits for one
    excess = max(0, prompt - 2000)
    stretch = 1 + (min(excess, 12000) + max(0, excess - 12000) / 4) / deployment.long_prompt_knee
    load = 1 + busy * (0.06 if deployment.slots < 8 else 0.01)
    queued_ms = sum(rng.uniform(1500, 4000) for _ in range(busy + 1 - deployment.slots))
    prefill_ms = 120 + (prompt - cached) / deployment.prefill_per_s * 1000 * rng.uniform(0.8, 1.6)
    ttft_ms = prefill_ms * stretch * load + queued_ms
    generation_ms = completion / deployment.tokens_per_s * 1000 * rng.uniform(0.85, 1.3) * stretch * load
    # now and then the server answers 503 (more often while its slots are full), and the router retries
    retried = rng.random() < (0.1 if busy >= deployment.slots + 2 else 0.005)
    waited_ms = routing["litellm_overhead_time_ms"] or 0.0
    if retried:
        routing["attempted_retries"] = 1
        waited_ms += rng.uniform(600, 2500)  # the failed attempt and the router's backoff
    ttft_ms += waited_ms
    duration = int(ttft_ms + generation_ms)
    end = at + dt.timedelta(milliseconds=duration)
    lab.busy[deployment.node].append(end)
    first = at + dt.timedelta(milliseconds=int(ttft_ms)) if streamed else end
    if streamed:
        routing["litellm_overhead_time_ms"] = None  # LiteLLM does not measure it on a stream
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning} if deployment.reasoning else None,
    }
    row["metadata"] |= routing | {
        "usage_object": usage,
        "additional_usage_values": {"cache_read_input_tokens": cached} if cached else {},
    }
    return (
        row
        | _routed(deployment)
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


def _routing(rng: random.Random, asked: Deployment, *, fallbacks: int) -> dict[str, Any]:
    """The router's notes in a spend log's metadata (LiteLLM >= 1.100 writes them on every
    routed request; 0 fallbacks: the model group asked for served it)."""
    overhead = rng.uniform(2.0, 9.0) + (rng.uniform(40, 400) if fallbacks else 0.0)
    return {
        "attempted_fallbacks": fallbacks,
        "attempted_retries": 0,
        "max_retries": MAX_RETRIES,
        "original_model_group": asked.model_group,
        "litellm_overhead_time_ms": round(overhead, 4),
    }


def _unreachable(rng: random.Random, row: dict[str, Any], asked: Deployment) -> dict[str, Any]:
    """A request to the main node while it is down that nothing else served: LiteLLM's
    connection error after its retries (and the fallback's failure, where there is one)."""
    routed = row | _routed(asked)
    routed["metadata"] |= _routing(rng, asked, fallbacks=0 if asked.fallback is None else 1) | {
        "attempted_retries": MAX_RETRIES,
        "litellm_overhead_time_ms": None,
    }
    message = (
        f"litellm.APIConnectionError: {asked.provider.capitalize()}Exception - All connection attempts failed"
    )
    duration = int(rng.uniform(1500, 6000))  # the retries' backoff
    return routed | _failed(
        routed,
        "APIConnectionError",
        "500",
        asked.provider,
        prompt_estimate=15,
        duration_ms=duration,
        message=message,
    )


def _failure(rng: random.Random, deployment: Deployment) -> str | None:
    roll = rng.random()
    if roll < 0.006:
        return "before_routing"
    if roll < 0.006 + (0.035 if deployment.provider == "openai" else 0.012):
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


def _routed(deployment: Deployment) -> dict[str, Any]:
    return {
        "model": deployment.model,
        "model_group": deployment.model_group,
        "model_id": deployment.model_id,
        "custom_llm_provider": deployment.provider,
        "api_base": deployment.api_base,
    }


def _failed(
    row: dict[str, Any],
    error_class: str,
    code: str,
    provider: str,
    *,
    prompt_estimate: int,
    duration_ms: int,
    message: str = "",
) -> dict[str, Any]:
    start = row["startTime"]
    end = start + dt.timedelta(milliseconds=duration_ms)
    metadata = row["metadata"] | {
        "status": "failure",
        "error_information": {
            "error_class": error_class,
            "error_code": code,
            "llm_provider": provider,
            "error_message": message,
        },
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


def _health_check(rng: random.Random, at: dt.datetime, deployment: Deployment) -> dict[str, Any]:
    row = _base(rng, at, "", HEALTH_CHECK, "none") | _routed(deployment) | {"model_group": "", "model_id": ""}
    row["team_id"] = HEALTH_CHECK
    row["request_tags"] = [HEALTH_CHECK]
    row["metadata"] = {"user_api_key": HEALTH_CHECK, "user_api_key_team_id": HEALTH_CHECK}
    duration = int(rng.uniform(300, 900))
    row["endTime"] = row["completionStartTime"] = row["startTime"] + dt.timedelta(milliseconds=duration)
    return row | {"prompt_tokens": 16, "completion_tokens": 8, "total_tokens": 24, "status": "success"}


def _master_key_call(rng: random.Random, at: dt.datetime) -> dict[str, Any]:
    row = _base(rng, at, "default_user_id", MASTER_KEY_HASH, "sdk") | _routed(GPT_OSS)
    row["metadata"]["user_api_key_user_id"] = "default_user_id"
    row["metadata"]["user_api_key_alias"] = None
    duration = int(rng.uniform(400, 2000))
    row["endTime"] = row["completionStartTime"] = row["startTime"] + dt.timedelta(milliseconds=duration)
    return row | {"prompt_tokens": 60, "completion_tokens": 40, "total_tokens": 100, "status": "success"}


def _naive(moment: dt.datetime) -> dt.datetime:
    """LiteLLM stores naive UTC."""
    return moment.astimezone(dt.UTC).replace(tzinfo=None)
