"""Each key against its tpm and rpm limit: its busiest clock minute of the week before the
key list was copied, and the requests LiteLLM refused it for a rate limit
(queries/key_limits.sql; issue 17, part 4). Rows as LiteLLM 1.108.7 writes them go into a
real LiteLLM database, and a real ETL run copies them and the key list into the store."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from contract.store import ADDED_COLUMNS, REQUESTS_FILE_SCHEMA, day_file
from dashboard.auth import Identity
from etl.run import ingest_rows, run_etl
from queries import pages
from queries.runner import StoreReader
from queries.scope import ScopedReader
from settings.config import Config, load_config
from tests import known_store, storeview
from tests.litellm_db import LiteLLMDatabase
from tests.test_pages import APP

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


def refused(user: str, start: dt.datetime, kind: str, limit: int, scope: str = "api_key") -> dict[str, Any]:
    """The row LiteLLM's rate limiter leaves when it refuses a request of `user`'s key
    (parallel_request_limiter_v3 raises ProxyRateLimitError in the pre-call hook, and
    _ProxyDBLogger.async_post_call_failure_hook writes it): never routed, no tokens."""
    row = known_store.request("failure_before_routing", user, start, duration_ms=3)
    row |= {"model": "gpt-oss-120b", "call_type": "acompletion"}
    reset = (start + dt.timedelta(seconds=60)).strftime("%Y-%m-%d %H:%M:%S")
    whose = known_store.key_of(user) if scope == "api_key" else user
    row["metadata"]["error_information"] = error_information(
        error_code="429",
        error_class="ProxyRateLimitError",
        llm_provider="hosted_vllm",
        error_message=(
            f"litellm.RateLimitError: Rate limit exceeded for {scope}: {whose}. "
            f"Limit type: {kind}. Current limit: {limit}, Remaining: 0. Limit resets at: {reset} UTC"
        ),
        error_rate_limit_category="litellm_rate_limit",
        error_rate_limit_type={"max_parallel_requests": "concurrent_requests"}.get(kind, kind),
        normalized_error="429_RATE_LIMIT_EXCEEDED",
    )
    return row


def refused_before_1_106(user: str, start: dt.datetime, kind: str, limit: int) -> dict[str, Any]:
    """The same refusal as LiteLLM 1.80 wrote it: an HTTPException, error code 429, and
    no rate-limit fields beside the message."""
    row = known_store.request("failure_before_routing", user, start, duration_ms=3)
    row["metadata"]["error_information"] = {
        "error_code": "429",
        "error_class": "HTTPException",
        "llm_provider": "",
        "traceback": "",
        "error_message": (
            f"429: Rate limit exceeded for api_key: {known_store.key_of(user)}. Limit type: {kind}. "
            f"Current limit: {limit}, Remaining: 0. Limit resets at: 2026-11-20 10:03:30 UTC"
        ),
    }
    return row


def session_budget_spent(user: str, start: dt.datetime) -> dict[str, Any]:
    """max_budget_per_session_limiter's refusal: a ProxyRateLimitError, but no rate limit."""
    row = known_store.request("failure_before_routing", user, start, duration_ms=3)
    row["metadata"]["error_information"] = error_information(
        error_code="429",
        error_class="ProxyRateLimitError",
        error_message="litellm.RateLimitError: Max budget per session exceeded.",
        error_rate_limit_category="litellm_rate_limit",
        error_rate_limit_type="budget",
        normalized_error="429_BUDGET_EXCEEDED",
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
    # minute 2: refused again, for her requests a minute, and by her owner's limit; and
    # her session's budget spent, which is no rate limit
    refused("alice", at(2, 10), "tokens", 1000),
    refused("alice", at(2, 11), "requests", 5),
    refused("alice", at(2, 12), "tokens", 50_000, scope="user"),
    session_budget_spent("alice", at(2, 13)),
    # nine days before the run: outside the week, however large
    success("alice", at(-9 * 24 * 60), 90_000, 0, 9_000),
    # bob (rpm 10 only): 3 requests in minutes 5 and 7 (the earlier is his peak), and the
    # provider's own 429, which is no refusal of his key
    *(success("bob", at(5, s), 100, 0, 10) for s in (1, 2, 3)),
    *(success("bob", at(7, s), 100, 0, 10) for s in (1, 2)),
    provider_429("bob", at(7, 3)),
    # dave (tpm 500): refused by a release before 1.106, and once for too many in flight
    refused_before_1_106("dave", at(9, 1), "tokens", 500),
    refused("dave", at(9, 2), "max_parallel_requests", 2),
    # carol has no limit: not listed, however busy
    *(success("carol", at(3, s), 5000, 0, 500) for s in range(20)),
]

KEYS = {  # LiteLLM_VerificationToken: (tpm_limit, rpm_limit)
    "alice": (1000, 5),
    "bob": (None, 10),
    "carol": (None, None),
    "dave": (500, None),  # a limit, and nothing but refusals in the week
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
    assert (alice["rate_limited"], alice["last_rate_limited_at"]) == (4, utc(at(2, 12)))
    assert (alice["rate_limited_tpm"], alice["rate_limited_rpm"], alice["rate_limited_parallel"]) == (3, 1, 0)
    assert alice["rate_limited_elsewhere"] == 1  # her owner's tpm limit

    assert (bob["peak_rpm"], bob["peak_rpm_at"], bob["rpm_share"]) == (3, utc(at(5)), 0.3)
    assert (bob["peak_tpm"], bob["peak_tpm_at"]) == (330, utc(at(5)))
    assert pd.isna(bob["tpm_limit"]) and pd.isna(bob["tpm_share"])
    assert bob["rate_limited"] == 0 and pd.isna(bob["last_rate_limited_at"])  # the provider's 429

    assert (dave["peak_tpm"], dave["tpm_share"], dave["peak_rpm"], dave["peak_rpm_at"]) == (
        0,
        0.0,
        2,
        utc(at(9)),
    )
    assert pd.isna(dave["peak_tpm_at"])
    assert (dave["rate_limited"], dave["rate_limited_tpm"], dave["rate_limited_parallel"]) == (2, 1, 1)


def test_the_store_keeps_only_the_words_of_a_refusal(store: Path, tmp_path: Path) -> None:
    """error_code, rate_limit and whose limit (rate_limit_scope), never the message; the
    same from PostgreSQL and from Python rows (the demo's, the tests')."""
    rows = storeview.requests(store).to_pandas().set_index("start_time").sort_index()
    ingest_rows(Config(store=tmp_path / "python"), ROWS)
    python = storeview.requests(tmp_path / "python").to_pandas().set_index("start_time").sort_index()
    added = ["error_code", "rate_limit", "rate_limit_scope"]  # issue 17's words (text columns)
    assert python[added].fillna("").equals(rows[added].fillna(""))
    refusals = rows[rows["rate_limit"].notna()]
    assert list(zip(refusals["rate_limit"], refusals["rate_limit_scope"], strict=True)) == [
        ("tpm", "api_key"), ("tpm", "api_key"), ("rpm", "api_key"), ("tpm", "user"),
        ("tpm", "api_key"), ("parallel", "api_key"),
    ]  # fmt: skip
    assert rows.loc[utc(at(7, 3)), "error_code"] == "429" and pd.isna(rows.loc[utc(at(7, 3)), "rate_limit"])
    assert pd.isna(rows.loc[utc(at(2, 13)), "rate_limit"])  # the session's budget
    assert set(rows["error_code"].dropna()) == {"429", "500"}


def test_a_student_sees_only_their_own_keys_limits(store: Path) -> None:
    limits = pages.limits(ScopedReader(StoreReader(store, zone="UTC"), (known_store.key_of("bob"),)))
    assert list(limits["api_key_hash"]) == [known_store.key_of("bob")]
    assert (limits["peak_rpm"].iloc[0], limits["rate_limited"].iloc[0]) == (3, 0)


def test_a_day_file_of_an_older_store_reads_and_takes_new_rows(store: Path, litellm: LiteLLMDatabase) -> None:
    """Written before error_code, rate_limit and rate_limit_scope: readers take them as
    NULL, and the next run that adds rows to its day writes it anew with them."""
    day = day_file(store, at(1).date())
    older = pq.read_table(day).drop_columns(list(ADDED_COLUMNS))
    pq.write_table(older, day)
    limits = pages.limits(StoreReader(store, zone="UTC")).set_index("key_alias")
    assert limits.loc["alice-laptop", "peak_tpm"] == 900
    # her refusals still count, of a kind unknown (and the session's budget with them)
    assert (limits.loc["alice-laptop", "rate_limited"], limits.loc["alice-laptop", "rate_limited_tpm"]) == (
        5,
        0,
    )

    litellm.insert_spend_logs([refused("alice", at(1, 30), "tokens", 1000)])
    run_etl(load_config(None, source=litellm.url, store=store, env={}))
    upgraded = pq.read_table(day)
    assert upgraded.schema == REQUESTS_FILE_SCHEMA
    assert upgraded.num_rows == older.num_rows + 1
    assert upgraded.filter(pc.is_valid(upgraded["rate_limit"])).num_rows == 1  # the new row's


def test_no_key_list_no_limits(tmp_path: Path) -> None:
    """Before the ETL has copied LiteLLM's key list there is no limit to show, and no error."""
    store = tmp_path / "store"
    ingest_rows(Config(store=store), ROWS[:2])
    assert pages.limits(StoreReader(store, zone="UTC")).empty


def open_app(store: Path, monkeypatch: pytest.MonkeyPatch, identity: Identity, lang: str = "en") -> AppTest:
    monkeypatch.setenv("USAGE_STORE", str(store))
    monkeypatch.setenv("USAGE_TIMEZONE", "Asia/Seoul")
    app = AppTest.from_file(APP, default_timeout=60)
    app.session_state["identity"] = identity
    app.query_params["lang"] = lang
    app.run()
    assert not app.exception, app.exception
    return app


def seoul(moment: dt.datetime) -> str:
    return utc(moment).tz_convert("Asia/Seoul").strftime("%Y-%m-%d %H:%M")


def test_a_student_reads_their_busiest_minute_and_why_requests_were_refused(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alice = known_store.key_of("alice")
    app = open_app(store, monkeypatch, Identity(role="student", name="alice", keys=(alice,), key=alice))
    shown = [str(m.value) for m in app.markdown]
    assert (
        "Busiest minute in the last 7 days: 900 tokens (90.0 % of the TPM limit) "
        "and 5 requests (100.0 % of the RPM limit)."
    ) in shown
    assert (
        "LiteLLM refused 4 of these requests in the last 7 days for a rate limit "
        f"(3 over tokens per minute, 1 over requests per minute); the last at {seoul(at(2, 12))}."
    ) in shown
    assert "1 of them by a limit of your user or team, not of this key." in shown
    # nobody else's figures: bob's and dave's keys appear nowhere
    assert not [text for text in shown if "330 tokens" in text or "over parallel requests" in text]


def test_a_student_reads_it_in_korean(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dave = known_store.key_of("dave")
    app = open_app(store, monkeypatch, Identity(role="student", name="dave", keys=(dave,), key=dave), "ko")
    shown = [str(m.value) for m in app.markdown]
    refusal = next(text for text in shown if text.startswith("최근 7일간 LiteLLM이"))
    assert "요청 2건을 거절했습니다(분당 토큰 초과 1건, 동시 요청 초과 1건). 마지막: " in refusal
    assert "가장 바빴던 1분: 토큰 0(TPM 한도의 0.0%)." in " ".join(shown)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_budgets_page_lists_the_keys_nearest_their_limits(
    store: Path, monkeypatch: pytest.MonkeyPatch, lang: str
) -> None:
    app = open_app(store, monkeypatch, Identity(role="admin", name="admin"), lang)
    app._page_hash = next(h for h, p in app._registered_pages.items() if p["url_pathname"] == "budgets")
    app.run()
    assert not app.exception, app.exception
    limits = getattr(app.dataframe[2].value, "data", app.dataframe[2].value)
    assert list(limits["key_alias"]) == ["alice-laptop", "bob-laptop", "dave-laptop"]
    percent = {"en": " %", "ko": "%"}[lang]
    assert list(limits["peak_tokens"]) == [f"900 (90.0{percent})", "—", f"0 (0.0{percent})"]
    assert list(limits["peak_requests"]) == [f"5 (100.0{percent})", f"3 (30.0{percent})", "—"]
    assert list(limits["rate_limited"]) == [4, 0, 2]
