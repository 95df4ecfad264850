"""A synthetic store of N requests over a year, written straight into the store layout
with the ETL's own writer: what the query benchmarks read at 1M, 10M and 30M requests.

    .venv/bin/python -m bench.synthetic_store --rows 10000000   # prints bench/out/synthetic-10000000

A lab's shape, not uniform noise: 200 people whose activity follows a Zipf law (a few
heavy agent users, a long tail), one or two keys each, a favourite client and model
(most requests, not all), ten keys without an owner, four GPU nodes behind least-busy
routing (a main node and backups per model), a day in Asia/Seoul (busy afternoons,
quiet nights, lighter weekends), streaming with time to first token and output speed per
node, reasoning tokens on gpt-oss, prefix caching, 3 % failures. Deterministic for a
seed. Building the database of bench/etl_bench.py at these sizes would take hours; this
writes the day files the ETL would have written (same schema, same Parquet options) and
then the derived data, through `etl.rollup`, as an ETL run does.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from contract.store import REQUESTS_FILE_SCHEMA, UTC_TS
from etl import rollup
from etl.load import write_day

OUT = Path(__file__).resolve().parent / "out"
PEOPLE = 200
OWNERLESS = 10  # the last keys belong to nobody (a lab server's key, a CI bot)
LAB_ZONE = "Asia/Seoul"
LOCAL_OFFSET_H = 9  # Asia/Seoul, no daylight saving
# share of a day's requests per local hour 0..23
HOURS = np.array([3, 2, 1, 1, 1, 1, 1, 2, 3, 5, 7, 8, 6, 7, 9, 9, 8, 7, 5, 5, 6, 6, 5, 4], dtype=float)


@dataclass(frozen=True)
class Client:
    user_agent: str | None
    name: str


CLIENTS = (
    Client("opencode/0.15.2 ai-sdk/provider-utils/3.0.10 runtime/bun/1.2.21", "OpenCode"),
    Client("claude-cli/2.0.14 (external, cli)", "Claude Code"),
    Client("Hermes-Agent/1.4 (linux)", "Hermes"),
    Client("OpenAI/Python 1.99.0", "OpenAI Python SDK"),
    Client("python-requests/2.32.3", "Python HTTP"),
    Client("aider/0.86.1", "aider"),
    Client("curl/8.5.0", "curl"),
    Client(None, "unknown"),
)
CLIENT_POPULARITY = np.array([30, 20, 15, 15, 8, 5, 3, 4], dtype=float)


@dataclass(frozen=True)
class Node:
    name: str
    api_base: str
    provider: str
    tokens_per_s: float
    prefill_per_s: float


NODES = (
    Node("blackwell-vllm", "http://ws-blackwell:8000/v1/chat/completions", "hosted_vllm", 120.0, 9000.0),
    Node("l40-a-llamacpp", "http://l40-a:8080/v1", "openai", 48.0, 2500.0),
    Node("l40-b-llamacpp", "http://l40-b:8080/v1", "openai", 52.0, 2700.0),
    Node("l40-c-llamacpp", "http://l40-c:8080/v1", "openai", 45.0, 2300.0),
)


@dataclass(frozen=True)
class Model:
    group: str
    nodes: tuple[int, ...]  # main node first, then the backups
    weights: tuple[float, ...]
    reasoning: bool
    usd_per_m_in: float
    usd_per_m_out: float


MODELS = (
    Model("gpt-oss-120b", (0, 1), (0.85, 0.15), True, 0.05, 0.25),
    Model("qwen3-coder-30b", (2, 3, 1), (0.6, 0.3, 0.1), False, 0.06, 0.25),
    Model("qwen3-32b", (1, 3), (0.7, 0.3), True, 0.05, 0.2),
    Model("gemma-3-27b", (3, 2), (0.8, 0.2), False, 0.04, 0.15),
)
MODEL_POPULARITY = np.array([45, 35, 12, 8], dtype=float)
ERRORS = ("InternalServerError", "Timeout", "ContextWindowExceededError", "RateLimitError")


class Lab:
    """Who the people are and what they like; fixed for a seed."""

    def __init__(self, rng: np.random.Generator) -> None:
        ranks = rng.permutation(PEOPLE) + 1
        self.activity = 1.0 / ranks**1.1
        self.activity /= self.activity.sum()
        self.two_keys = rng.random(PEOPLE) < 0.3
        self.client = rng.choice(len(CLIENTS), PEOPLE, p=CLIENT_POPULARITY / CLIENT_POPULARITY.sum())
        self.model = rng.choice(len(MODELS), PEOPLE, p=MODEL_POPULARITY / MODEL_POPULARITY.sum())
        # two keys per person (the second used by people who have one); key k of person p
        self.key_hash = np.array(
            [[hashlib.sha256(raw_key(p, k).encode()).hexdigest() for k in range(2)] for p in range(PEOPLE)]
        )
        self.user_id = np.array(
            [None if p >= PEOPLE - OWNERLESS else f"user{p:03d}" for p in range(PEOPLE)], dtype=object
        )
        self.key_alias = np.array(
            [[f"user{p:03d}-{'laptop' if k == 0 else 'server'}" for k in range(2)] for p in range(PEOPLE)]
        )


def raw_key(person: int, key: int) -> str:
    """The made-up virtual key `key` (0 or 1) of `person`, as a student would paste it."""
    return f"sk-synthetic-{person}-{key}"


def day_table(lab: Lab, day: dt.date, n: int, rng: np.random.Generator, serial: int) -> pa.Table:
    """`n` requests that started on UTC `day`, in the store's file schema."""
    utc_hours = np.roll(HOURS, -LOCAL_OFFSET_H)  # share per UTC hour of the day
    hour = rng.choice(24, n, p=utc_hours / utc_hours.sum())
    midnight_us = int(dt.datetime.combine(day, dt.time(), dt.UTC).timestamp() * 1e6)
    start = midnight_us + hour * 3_600_000_000 + rng.integers(0, 3_600_000_000, n)
    start.sort()
    person = rng.choice(PEOPLE, n, p=lab.activity)
    key = np.where(lab.two_keys[person] & (rng.random(n) < 0.3), 1, 0)
    client = np.where(rng.random(n) < 0.85, lab.client[person], rng.integers(0, len(CLIENTS), n))
    model = np.where(rng.random(n) < 0.8, lab.model[person], rng.integers(0, len(MODELS), n))
    node = np.empty(n, dtype=np.int64)
    for m, spec in enumerate(MODELS):
        mine = model == m
        node[mine] = rng.choice(spec.nodes, int(mine.sum()), p=np.array(spec.weights))
    failed = rng.random(n) < 0.03
    streamed = (rng.random(n) < 0.8) & ~failed
    prompt = np.minimum(rng.lognormal(np.log(6000), 1.0, n), 120_000).astype(np.int64)
    cached = np.where(rng.random(n) < 0.6, (prompt * rng.uniform(0.3, 0.95, n)).astype(np.int64), 0)
    completion = np.where(failed, 0, np.minimum(rng.lognormal(np.log(300), 1.0, n), 16_000)).astype(np.int64)
    reasons = np.array([spec.reasoning for spec in MODELS])[model]
    reasoning = np.where(reasons, (completion * rng.uniform(0.1, 0.5, n)).astype(np.int64), 0)
    tps = np.array([x.tokens_per_s for x in NODES])[node] * rng.uniform(0.6, 1.2, n)
    prefill = np.array([x.prefill_per_s for x in NODES])[node]
    ttft_us = ((prompt - cached) / prefill + rng.uniform(0.05, 0.4, n)) * 1e6
    generation_us = np.where(failed, 0, completion / tps * 1e6)
    first = start + ttft_us.astype(np.int64)
    end = first + generation_us.astype(np.int64)
    completion_start = np.where(streamed, first, end)
    price_in = np.array([x.usd_per_m_in for x in MODELS])[model]
    price_out = np.array([x.usd_per_m_out for x in MODELS])[model]
    spend = np.where(failed, 0.0, (prompt * price_in + completion * price_out) / 1e6)

    ids = pc.binary_join_element_wise(
        f"syn-{day:%Y%m%d}-", pc.cast(pa.array(np.arange(serial, serial + n)), pa.string()), ""
    )
    ua = [c.user_agent for c in CLIENTS]
    tags_per_client = [
        [] if u is None else [f"User-Agent: {u.split('/')[0]}", f"User-Agent: {u}"] for u in ua
    ]
    user_id = lab.user_id[person]
    alias = lab.key_alias[person, key]
    display = np.where(pd_isnull(user_id), alias, user_id)
    columns = {
        "request_id": ids,
        "start_time": _ts(start),
        "end_time": _ts(end),
        "completion_start_time": _ts(completion_start),
        "api_key_hash": pa.array(lab.key_hash[person, key]),
        "key_alias": pa.array(alias),
        "user_id": pa.array(user_id, pa.string()),
        "team_id": pa.nulls(n, pa.string()),
        "end_user": pa.nulls(n, pa.string()),
        "user": pa.array(display, pa.string()),
        "model": pa.array([f"openai/{MODELS[m].group}" for m in model]),
        "model_group": _pick([m.group for m in MODELS], model),
        "model_id": pa.array(
            np.char.add(np.array([x.name for x in NODES])[node], np.array([m.group for m in MODELS])[model])
        ),
        "provider": _pick([x.provider for x in NODES], node),
        "api_base": _pick([x.api_base for x in NODES], node),
        "node": _pick([x.name for x in NODES], node),
        "user_agent": _pick(ua, client),
        "client": _pick([c.name for c in CLIENTS], client),
        "call_type": pa.array(np.where(client == 1, "anthropic_messages", "acompletion")),
        "status": pa.array(np.where(failed, "failure", "success")),
        "error_class": _pick([None, *ERRORS], np.where(failed, rng.integers(1, len(ERRORS) + 1, n), 0)),
        "prompt_tokens": pa.array(prompt),
        "completion_tokens": pa.array(completion),
        "total_tokens": pa.array(prompt + completion),
        "cached_tokens": pa.array(cached),
        "cache_creation_tokens": pa.array(np.zeros(n, dtype=np.int64)),
        "reasoning_tokens": pa.array(reasoning),
        "spend": pa.array(spend),
        "cache_hit": pa.array(np.zeros(n, dtype=bool)),
        "session_id": ids,
        "request_tags": pa.array([tags_per_client[c] for c in client], pa.list_(pa.string())),
        "duration_ms": pa.array((end - start) // 1000),
        "ingested_at": _ts(end + 300_000_000),
        # a failure's words LiteLLM's rate limiter leaves (etl/extract_sql.py METADATA_WORDS,
        # etl/transform_rules.py): none here
        **{name: pa.nulls(n, pa.string()) for name in ("error_code", "rate_limit", "rate_limit_scope")},
        # the router's words: every request served by the group asked for at its first
        # attempt; LiteLLM's own time on non-streamed successes only, as LiteLLM 1.108 writes
        # it (5-25 ms, from the start time: no draw, so the other columns stay as they were)
        "attempted_fallbacks": pa.array(np.zeros(n, dtype=np.int64)),
        "attempted_retries": pa.array(np.zeros(n, dtype=np.int64)),
        "original_model_group": _pick([m.group for m in MODELS], model),
        "litellm_overhead_ms": pa.array(
            np.where(streamed | failed, np.nan, 5 + (start % 20_000) / 1000), from_pandas=True
        ),
    }
    return pa.table(columns, schema=REQUESTS_FILE_SCHEMA)


def pd_isnull(values: np.ndarray) -> np.ndarray:
    return np.array([v is None for v in values])


def _ts(us: np.ndarray) -> pa.Array:
    return pa.array(us.astype(np.int64), pa.int64()).cast(UTC_TS)


def _pick(values: list[str | None] | list[str], index: np.ndarray) -> pa.Array:
    return pa.array(values, pa.string()).take(pa.array(index))


def build(rows: int, *, days: int = 365, seed: int = 7, out: Path = OUT, end: dt.date | None = None) -> Path:
    """bench/out/synthetic-<rows>: `rows` requests over the `days` UTC days up to `end`
    (default: today), then its derived data. Reused when complete."""
    store = out / f"synthetic-{rows}"
    if (store / "complete").is_file():
        return store
    building = out / f"synthetic-{rows}.building"
    shutil.rmtree(building, ignore_errors=True)
    rng = np.random.default_rng(seed)
    lab = Lab(rng)
    last = end or dt.datetime.now(dt.UTC).date()
    dates = [last - dt.timedelta(days=days - 1 - i) for i in range(days)]
    weights = np.array([0.35 if d.weekday() >= 5 else 1.0 for d in dates]) * rng.uniform(0.7, 1.3, days)
    per_day = np.floor(weights / weights.sum() * rows).astype(np.int64)
    per_day[-1] += rows - per_day.sum()
    began, serial = time.monotonic(), 0
    for i, (day, n) in enumerate(zip(dates, per_day, strict=True)):
        write_day(building, day, day_table(lab, day, int(n), rng, serial))
        serial += int(n)
        if sys.stderr.isatty() or i % 30 == 29:
            print(f"\r  day files: {i + 1}/{days}, {serial:,} requests", end="", file=sys.stderr)
    print(f"\n  {rows:,} requests in {time.monotonic() - began:.0f} s", file=sys.stderr)
    began = time.monotonic()
    rollup.ensure(building, LAB_ZONE)
    print(f"  rollups of {days} days in {time.monotonic() - began:.0f} s", file=sys.stderr)
    (building / "complete").write_text(f"{rows} requests, seed {seed}\n")
    shutil.rmtree(store, ignore_errors=True)
    building.rename(store)
    return store


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=365)
    args = parser.parse_args()
    print(build(args.rows, days=args.days))


if __name__ == "__main__":
    main()
