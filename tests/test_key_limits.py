"""Each key against its tpm and rpm limit: its busiest clock minute of the week before the
key list was copied, and the requests LiteLLM refused it for a rate limit
(queries/key_limits.sql; issue 17, part 4). Rows as LiteLLM 1.108.7 writes them go into a
real LiteLLM database, and a real ETL run copies them and the key list into the store."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from etl.config import Config, load_config
from etl.run import ingest_rows, run_etl
from queries import pages
from queries.runner import StoreReader
from queries.scope import ScopedReader
from tests import known_store
from tests.litellm_db import LiteLLMDatabase

# The ETL copies the key list when it runs (now), and the limits are read over the week
# before: the requests lie a day before the run, at whole minutes of a whole hour.
T0 = (dt.datetime.now(dt.UTC) - dt.timedelta(days=1)).replace(minute=0, second=0, microsecond=0, tzinfo=None)


def at(minute: int, second: float = 0) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minute, seconds=second)


def utc(moment: dt.datetime) -> pd.Timestamp:
    return pd.Timestamp(moment, tz="UTC")


def success(user: str, start: dt.datetime, prompt: int, cached: int, completion: int) -> dict[str, Any]:
    """A vLLM request of `user` with that usage (cached tokens are part of the prompt)."""
    return known_store.request(
        "vllm_streamed_reasoning_cached",
        user,
        start,
        usage=(prompt, cached, completion, 0),
        spend=0.001,
        duration_ms=1500,
        ttft_ms=300,
    )


def error_information(**values: Any) -> dict[str, Any]:
    """metadata.error_information with every field LiteLLM 1.108.7 writes."""
    return {
        "error_code": "",
        "error_class": "",
        "llm_provider": "",
        "traceback": "",
        "error_message": "",
        "error_provider_request_id": None,
        "error_rate_limit_category": None,
        "error_rate_limit_type": None,
        "error_budget_entity_type": None,
        "error_budget_entity_id": None,
        "error_budget_limit": None,
        "error_budget_spend": None,
        "normalized_error": None,
    } | values


def refused(user: str, start: dt.datetime, kind: str, limit: int) -> dict[str, Any]:
    """The row LiteLLM's rate limiter leaves when it refuses a request of `user`'s key
    (parallel_request_limiter_v3 raises ProxyRateLimitError in the pre-call hook, and
    _ProxyDBLogger.async_post_call_failure_hook writes it): never routed, no tokens."""
    row = known_store.request("failure_before_routing", user, start, duration_ms=3)
    row |= {"model": "gpt-oss-120b", "call_type": "acompletion"}
    reset = (start + dt.timedelta(seconds=60)).strftime("%Y-%m-%d %H:%M:%S")
    row["metadata"]["error_information"] = error_information(
        error_code="429",
        error_class="ProxyRateLimitError",
        llm_provider="hosted_vllm",
        error_message=(
            f"litellm.RateLimitError: Rate limit exceeded for api_key: {known_store.key_of(user)}. "
            f"Limit type: {kind}. Current limit: {limit}, Remaining: 0. Limit resets at: {reset} UTC"
        ),
        error_rate_limit_category="litellm_rate_limit",
        error_rate_limit_type=kind,
        normalized_error="429_RATE_LIMIT_EXCEEDED",
    )
    return row


def provider_429(user: str, start: dt.datetime) -> dict[str, Any]:
    """The provider's own 429 (routed, failed upstream): not LiteLLM refusing the key."""
    row = known_store.request("failure_after_routing", user, start, duration_ms=40)
    row["metadata"]["error_information"] = error_information(
        error_code="429",
        error_class="RateLimitError",
        llm_provider="hosted_vllm",
        error_message="litellm.RateLimitError: RateLimitError: Hosted_vllmException - Too many requests",
        error_rate_limit_category="vendor_rate_limit",
        normalized_error="429_RATE_LIMIT_EXCEEDED",
    )
    return row


def provider_failure(user: str, start: dt.datetime) -> dict[str, Any]:
    """A routed request the backend failed: LiteLLM estimated its prompt tokens (16)."""
    return known_store.request("failure_after_routing", user, start, duration_ms=40)


ROWS = [
    # alice (tpm 1000, rpm 5). Minute 0: 2 x (300 prompt, 100 of them cached, 50 out) = 500
    success("alice", at(0, 5), 300, 100, 50),
    success("alice", at(0, 59.9), 300, 100, 50),
    # minute 1: 3 x 300 = 900 tokens; 5 requests with a backend failure (its 16 estimated
    # tokens were refunded) and the refusal when the limiter's window was full
    success("alice", at(1, 0.1), 200, 0, 100),
    success("alice", at(1, 20), 200, 0, 100),
    provider_failure("alice", at(1, 30)),
    success("alice", at(1, 40), 200, 0, 100),
    refused("alice", at(1, 59), "tokens", 1000),
    # minute 2: refused again
    refused("alice", at(2, 10), "tokens", 1000),
    # nine days before the run: outside the week, however large
    success("alice", at(-9 * 24 * 60), 90_000, 0, 9_000),
    # bob (rpm 10 only): 3 requests in minutes 5 and 7 (the earlier is his peak), and the
    # provider's own 429, which is no refusal of his key
    *(success("bob", at(5, s), 100, 0, 10) for s in (1, 2, 3)),
    *(success("bob", at(7, s), 100, 0, 10) for s in (1, 2)),
    provider_429("bob", at(7, 3)),
    # carol has no limit: not listed, however busy
    *(success("carol", at(3, s), 5000, 0, 500) for s in range(20)),
]

KEYS = {  # LiteLLM_VerificationToken: (tpm_limit, rpm_limit)
    "alice": (1000, 5),
    "bob": (None, 10),
    "carol": (None, None),
    "dave": (500, None),  # a limit and no request in the week
}


@pytest.fixture
def store(litellm: LiteLLMDatabase, tmp_path: Path) -> Path:
    litellm.insert_spend_logs(ROWS)
    for user, (tpm, rpm) in KEYS.items():
        litellm.execute(
            'INSERT INTO "LiteLLM_VerificationToken" (token, key_name, key_alias, user_id, spend, '
            "tpm_limit, rpm_limit) VALUES (%s, %s, %s, %s, 0, %s, %s)",
            [known_store.key_of(user), f"sk-...{user[-4:]}", f"{user}-laptop", user, tpm, rpm],
        )
    store = tmp_path / "store"
    run_etl(load_config(None, source=litellm.url, store=store, env={}))
    return store


def test_each_limited_key_against_its_busiest_minute(store: Path) -> None:
    limits = pages.limits(StoreReader(store, zone="UTC"))
    assert list(limits["key_alias"]) == ["alice-laptop", "bob-laptop", "dave-laptop"]  # nearest first
    alice, bob, dave = (row for _, row in limits.iterrows())

    # tokens as the limiter counts them: successes only, less their cached prompt tokens
    assert (alice["peak_tpm"], alice["peak_tpm_at"], alice["tpm_share"]) == (900, utc(at(1)), 0.9)
    # requests: all of them, the refusal and the backend failure too
    assert (alice["peak_rpm"], alice["peak_rpm_at"], alice["rpm_share"]) == (5, utc(at(1)), 1.0)
    assert (alice["rate_limited"], alice["last_rate_limited_at"]) == (2, utc(at(2, 10)))

    assert (bob["peak_rpm"], bob["peak_rpm_at"], bob["rpm_share"]) == (3, utc(at(5)), 0.3)
    assert (bob["peak_tpm"], bob["peak_tpm_at"]) == (330, utc(at(5)))
    assert pd.isna(bob["tpm_limit"]) and pd.isna(bob["tpm_share"])
    assert bob["rate_limited"] == 0 and pd.isna(bob["last_rate_limited_at"])  # the provider's 429

    assert (dave["peak_tpm"], dave["peak_rpm"], dave["tpm_share"], dave["rate_limited"]) == (0, 0, 0.0, 0)
    assert pd.isna(dave["peak_tpm_at"]) and pd.isna(dave["peak_rpm_at"])


def test_a_student_sees_only_their_own_keys_limits(store: Path) -> None:
    limits = pages.limits(ScopedReader(StoreReader(store, zone="UTC"), (known_store.key_of("bob"),)))
    assert list(limits["api_key_hash"]) == [known_store.key_of("bob")]
    assert (limits["peak_rpm"].iloc[0], limits["rate_limited"].iloc[0]) == (3, 0)


def test_no_key_list_no_limits(tmp_path: Path) -> None:
    """Before the ETL has copied LiteLLM's key list there is no limit to show, and no error."""
    store = tmp_path / "store"
    ingest_rows(Config(store=store), ROWS[:2])
    assert pages.limits(StoreReader(store, zone="UTC")).empty
