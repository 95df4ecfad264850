"""The transform on LiteLLM's real row shapes: every store column's rule, noise, nodes, clients.

One module because it is the tests of one pure function, rule by rule.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract.store import REQUESTS_SCHEMA
from etl.extract import METADATA_TEXT, table_from_rows
from etl.transform import Rules, Transformed, host_port, transform
from settings.config import ClientRule, NodeRule, NoiseRules, sha256_hex
from tests.litellm_db import iter_sample_rows, samples, spend_log

NOW = dt.datetime(2026, 12, 1, 9, 0, tzinfo=dt.UTC)
LAB_NODES = (
    NodeRule("blackwell", api_bases=("http://ws-blackwell:8000/v1",)),
    NodeRule("l40-a", api_bases=("l40-a:8080",)),
    NodeRule("l40-b", model_ids=("l40-b-qwen3-coder-30b",)),
)


def run(rows: list[dict[str, Any]], rules: Rules | None = None) -> Transformed:
    return transform(table_from_rows(rows), rules or Rules(), NOW)


def by_id(out: Transformed) -> dict[str, dict[str, Any]]:
    return {r["request_id"]: r for r in out.table.to_pylist()}


def test_samples_become_store_rows_with_exact_values() -> None:
    out = run(list(iter_sample_rows()))
    assert out.table.schema == REQUESTS_SCHEMA
    rows = by_id(out)
    s = samples()

    vllm = rows[s["vllm_streamed_reasoning_cached"]["request_id"]]
    assert vllm["start_time"] == dt.datetime(2026, 11, 15, 13, 47, 22, 232000, tzinfo=dt.UTC)
    assert vllm["completion_start_time"] == dt.datetime(2026, 11, 15, 13, 47, 22, 777000, tzinfo=dt.UTC)
    assert vllm["date"] == dt.date(2026, 11, 15)
    assert (vllm["user"], vllm["user_id"], vllm["key_alias"]) == (
        "tomas.weber",
        "tomas.weber",
        "tomas-desktop",
    )
    assert vllm["team_id"] is None and vllm["end_user"] is None  # LiteLLM's "" means absent
    assert (vllm["prompt_tokens"], vllm["completion_tokens"], vllm["total_tokens"]) == (4457, 193, 4650)
    assert (vllm["cached_tokens"], vllm["reasoning_tokens"], vllm["cache_creation_tokens"]) == (1027, 83, 0)
    assert vllm["spend"] == pytest.approx(0.000645705)
    assert vllm["model_group"] == "gpt-oss-120b" and vllm["provider"] == "hosted_vllm"
    assert vllm["api_base"] == "http://ws-blackwell:8000/v1/chat/completions"
    assert vllm["node"] == "ws-blackwell:8000"
    assert (vllm["user_agent"], vllm["client"]) == ("OpenAI/Python 1.99.0", "OpenAI Python SDK")
    assert vllm["status"] == "success" and vllm["error_class"] is None
    assert vllm["duration_ms"] == 1640 and vllm["cache_hit"] is False
    assert vllm["ingested_at"] == NOW

    llama = rows[s["llamacpp_non_streamed"]["request_id"]]
    assert llama["api_base"] == "http://l40-a:8080/v1"  # trailing slash removed
    assert llama["node"] == "l40-a:8080"
    assert llama["reasoning_tokens"] == 0 and llama["cached_tokens"] == 0
    assert llama["completion_start_time"] == llama["end_time"]  # not streamed

    before = rows[s["failure_before_routing"]["request_id"]]
    assert (before["status"], before["error_class"]) == ("failure", "ProxyModelNotFoundError")
    assert before["api_base"] is None and before["node"] == "unknown"
    assert before["client"] == "unknown" and before["user_agent"] is None
    assert before["model_group"] == "unknown-model"  # empty model_group falls back to model

    after = rows[s["failure_after_routing"]["request_id"]]
    assert (after["status"], after["error_class"]) == ("failure", "InternalServerError")
    assert after["prompt_tokens"] == 16 and after["spend"] == 0

    claude = rows[s["claude_code_messages"]["request_id"]]
    # no metadata.user_agent: the longest "User-Agent: ..." tag, without its prefix
    assert claude["user_agent"] == "claude-cli/2.0.14 (external, cli)"
    assert claude["client"] == "Claude Code" and claude["call_type"] == "anthropic_messages"
    assert claude["request_tags"] == [
        "User-Agent: claude-cli",
        "User-Agent: claude-cli/2.0.14 (external, cli)",
    ]

    no_ua = rows[s["no_user_agent"]["request_id"]]
    assert (no_ua["user_agent"], no_ua["client"], no_ua["request_tags"]) == (None, "unknown", [])

    ownerless = rows[s["key_without_owner"]["request_id"]]
    assert ownerless["user_id"] is None and ownerless["user"] == "lab-shared-eval"  # alias stands in
    assert ownerless["end_user"] == "eval-run-3"
    # usage_object has no cached_tokens path here; additional_usage_values does
    assert ownerless["cached_tokens"] == 1133
    assert ownerless["client"] == "Python HTTP"

    older = rows[s["older_release_row"]["request_id"]]
    assert older["user_agent"] == "python-requests/2.32.3" and older["cached_tokens"] == 251


def test_noise_is_dropped_and_counted_by_reason() -> None:
    out = run(list(iter_sample_rows()))
    s = samples()
    kept = set(by_id(out))
    for kind in (
        "health_check",
        "health_check_older_release",
        "master_key",
        "master_key_older_release_sha256",
    ):
        assert s[kind]["request_id"] not in kept
    assert out.dropped == {"health_check": 2, "master_key": 2, "rule": 0}
    assert out.table.num_rows == 8
    assert sorted(out.dropped_rows["request_id"].to_pylist()) == sorted(
        s[k]["request_id"]
        for k in (
            "health_check",
            "health_check_older_release",
            "master_key",
            "master_key_older_release_sha256",
        )
    )


def test_master_key_sha256_from_an_older_release_is_recognised_without_the_default_user() -> None:
    secret = "sk-lab-master-1234"
    row = spend_log("vllm_streamed_reasoning_cached", api_key=sha256_hex(secret), user="")
    row["metadata"]["user_api_key_user_id"] = None
    unconfigured = run([row])
    assert unconfigured.table.num_rows == 1  # nothing says this hash is the master key
    configured = run([row], Rules(noise=NoiseRules(master_key_hashes=frozenset({sha256_hex(secret)}))))
    assert configured.table.num_rows == 0 and configured.dropped["master_key"] == 1


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"api_key": "litellm-internal-health-check"}, "health_check"),
        ({"api_key": "2ee659761968def976c7905217d96fa6e765f300dfb066f6c73fd3c279b3435a"}, "health_check"),
        ({"team_id": "litellm-internal-health-check"}, "health_check"),
        ({"api_key": "litellm_proxy_master_key"}, "master_key"),
        ({"metadata": {"user_api_key_user_id": "default_user_id"}}, "master_key"),
        ({"metadata": {"user_api_key_alias": "ci-bot"}}, "rule"),
        ({"metadata": {"user_api_key_user_id": "guest"}}, "rule"),
        ({"request_tags": ["load-test", "User-Agent: curl/8.5.0"]}, "rule"),
    ],
)
def test_each_noise_rule(change: dict[str, Any], reason: str) -> None:
    rules = Rules(
        noise=NoiseRules(
            key_aliases=frozenset({"ci-bot"}),
            users=frozenset({"guest"}),
            tags=frozenset({"load-test"}),
            tag_keys=frozenset({"tomas-desktop"}),  # the sample row's key alias
        )
    )
    out = run([spend_log(**change)], rules)
    assert out.table.num_rows == 0
    assert out.dropped[reason] == 1 and sum(out.dropped.values()) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"request_tags": ["litellm-internal-health-check"]},
        {"metadata": {"tags": ["litellm-internal-health-check"]}},
        {"request_tags": ["load-test"]},  # a configured tag, from a key the rule does not name
        # a configured user, claimed in the request body by a key with neither owner nor alias
        {
            "end_user": "guest",
            "user": "",
            "metadata": {"user_api_key_user_id": None, "user_api_key_alias": None},
        },
        {"metadata": {"user_api_key_team_id": "litellm-internal-health-check"}},
    ],
)
def test_what_a_client_sets_never_drops_its_request(change: dict[str, Any]) -> None:
    """Tags, end_user and request metadata come from the client: a student's $99 request
    tagged as a health check is the student's usage, kept and counted."""
    rules = Rules(
        noise=NoiseRules(
            users=frozenset({"guest"}), tags=frozenset({"load-test"}), tag_keys=frozenset({"ci-bot"})
        )
    )
    out = run([spend_log(spend=99.0, **change)], rules)
    assert out.table.num_rows == 1 and out.table["spend"].to_pylist() == [99.0]
    assert sum(out.dropped.values()) == 0


def test_configured_nodes_match_every_form_of_api_base_and_model_id() -> None:
    rows = [
        spend_log(api_base="http://ws-blackwell:8000/v1/chat/completions"),
        spend_log(api_base="http://WS-Blackwell:8000/v1/"),
        spend_log("llamacpp_non_streamed", api_base="http://l40-a:8080/v1"),
        spend_log("key_without_owner"),  # l40-b, matched by its deployment id
        spend_log(api_base="https://elsewhere.example.org/v1", model_id=""),
        spend_log(api_base="http://10.0.0.9/v1", model_id=""),
        spend_log("failure_before_routing"),
    ]
    out = run(rows, Rules(nodes=LAB_NODES))
    nodes = [r["node"] for r in out.table.to_pylist()]
    assert nodes == [
        "blackwell",
        "blackwell",
        "l40-a",
        "l40-b",
        "elsewhere.example.org",
        "10.0.0.9",
        "unknown",
    ]


@pytest.mark.parametrize(
    ("agent", "client"),
    [
        ("opencode/0.15.2 ai-sdk/provider-utils/3.0.10", "OpenCode"),
        ("Hermes-Agent/1.4 (linux)", "Hermes"),
        ("claude-cli/2.0.14 (external, cli)", "Claude Code"),
        ("Cline/3.2.1", "Cline"),
        ("RooCode/3.28", "Roo Code"),
        ("aider/0.86.1", "aider"),
        ("Continue/1.2.0", "Continue"),
        ("open-webui/0.6.32", "Open WebUI"),
        ("litellm/1.108.7", "LiteLLM SDK"),
        ("OpenAI/Python 1.99.0", "OpenAI Python SDK"),
        ("OpenAI/JS 5.20.0", "OpenAI JS SDK"),
        ("curl/8.5.0", "curl"),
        ("python-httpx/0.28.1", "Python HTTP"),
        ("Mozilla/5.0 (X11; Linux x86_64)", "Mozilla"),
        ("", "unknown"),
    ],
)
def test_default_client_rules(agent: str, client: str) -> None:
    out = run([spend_log(metadata={"user_agent": agent}, request_tags=[])])
    assert out.table.column("client").to_pylist() == [client]


def test_configured_client_rules_come_before_the_defaults() -> None:
    rules = Rules(clients=(ClientRule("Lab notebook", ("python-requests/2.32",)),))
    out = run(
        [spend_log("older_release_row"), spend_log("key_without_owner", metadata={"user_agent": "curl/8"})],
        rules,
    )
    assert out.table.column("client").to_pylist() == ["Lab notebook", "curl"]


def test_display_user_falls_back_to_alias_end_user_then_key_prefix() -> None:
    ownerless: dict[str, Any] = {"user_api_key_user_id": None, "user_api_key_alias": None}
    rows = [
        spend_log(user="", metadata=ownerless, end_user="eval-run-7"),
        spend_log(user="", metadata=ownerless, end_user="", api_key="abcdef0123456789" * 4),
    ]
    out = run(rows)
    assert out.table.column("user").to_pylist() == ["eval-run-7", "key:abcdef01"]


def test_status_from_the_metadata_when_the_column_is_empty_and_null_counts_as_success() -> None:
    rows = [
        spend_log("failure_after_routing", status=None),  # before LiteLLM had the column
        spend_log(status=None),
        spend_log(status="", metadata={"status": "success"}),
    ]
    out = run(rows)
    assert out.table.column("status").to_pylist() == ["failure", "success", "success"]


def test_duration_from_the_timestamps_when_request_duration_ms_is_missing() -> None:
    out = run([spend_log(request_duration_ms=None)])
    assert out.table.column("duration_ms").to_pylist() == [1640]


def test_newer_releases_cache_read_and_creation_tokens() -> None:
    md = {
        "usage_object": {"prompt_tokens": 900, "completion_tokens": 10, "total_tokens": 910},
        "additional_usage_values": {"cache_read_input_tokens": 600, "cache_creation_input_tokens": 200},
    }
    out = run([spend_log(metadata=md, prompt_tokens=900, completion_tokens=10, total_tokens=910)])
    row = out.table.to_pylist()[0]
    assert (row["cached_tokens"], row["cache_creation_tokens"], row["reasoning_tokens"]) == (600, 200, 0)


def test_cache_hits_are_flagged() -> None:
    out = run([spend_log(cache_hit="True"), spend_log(cache_hit="None"), spend_log(cache_hit=None)])
    assert out.table.column("cache_hit").to_pylist() == [True, False, False]


@pytest.mark.parametrize(
    ("row", "check"),
    [
        (
            {"metadata": "not an object"},
            lambda r: r["user"] == "tomas.weber" and r["cached_tokens"] == 0 and r["key_alias"] is None,
        ),
        (
            {"metadata": {"usage_object": {"prompt_tokens_details": {"cached_tokens": "lots"}}}},
            lambda r: r["cached_tokens"] == 1027,  # falls through to additional_usage_values
        ),
        (
            {"metadata": {"usage_object": {"completion_tokens_details": {"reasoning_tokens": -4}}}},
            lambda r: r["reasoning_tokens"] == 83,
        ),
        (
            {"metadata": {"usage_object": {"prompt_tokens_details": {"cached_tokens": 99999}}}},
            lambda r: r["cached_tokens"] == 4457,  # capped at the prompt it is part of
        ),
        ({"request_tags": {"User-Agent": "x"}}, lambda r: r["request_tags"] == []),
        ({"status": "weird"}, lambda r: r["status"] == "success"),
        ({"request_duration_ms": -5}, lambda r: r["duration_ms"] == 0),
    ],
)
def test_malformed_values_are_repaired_counted_and_the_row_kept(row: dict[str, Any], check: Any) -> None:
    out = run([spend_log(**row), spend_log()])
    assert out.table.num_rows == 2
    assert out.malformed == 1
    assert len(out.malformed_examples) == 1
    assert check(out.table.to_pylist()[0])


def test_nulls_where_litellm_writes_values_do_not_break_the_row() -> None:
    row = spend_log(
        model_group=None,
        api_base=None,
        request_tags=None,
        metadata={"usage_object": None, "additional_usage_values": None, "user_agent": None},
        team_id=None,
        cache_hit=None,
        session_id=None,
    )
    out = run([row])
    r = out.table.to_pylist()[0]
    assert out.malformed == 0
    assert r["model_group"] == "hosted_vllm/openai/gpt-oss-120b"
    assert (r["node"], r["request_tags"], r["session_id"]) == ("unknown", [], None)
    assert (r["cached_tokens"], r["reasoning_tokens"]) == (0, 0)


def test_empty_batch() -> None:
    out = transform(table_from_rows([]), Rules(), NOW)
    assert out.table.num_rows == 0 and out.table.schema == REQUESTS_SCHEMA
    assert out.malformed == 0 and out.dropped == {"health_check": 0, "master_key": 0, "rule": 0}


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://ws-blackwell:8000/v1/chat/completions", "ws-blackwell:8000"),
        ("http://ws-blackwell:8000/v1/", "ws-blackwell:8000"),
        ("ws-blackwell:8000", "ws-blackwell:8000"),
        ("https://api.example.org/v1", "api.example.org"),
        ("http://[fd00::5]:8080/v1", "[fd00::5]:8080"),
        ("", None),
    ],
)
def test_host_port(url: str, address: str | None) -> None:
    assert host_port(url) == address


def test_transform_rejects_tables_of_another_shape() -> None:
    with pytest.raises(TypeError):
        transform(pa.table({"request_id": ["x"]}), Rules(), NOW)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
numberish = st.one_of(
    json_values,
    st.from_regex(r"\s*-?\d{1,6}(\.\d{1,3})?([eE][+-]?\d)?\s*", fullmatch=True),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.fixed_dictionaries(dict.fromkeys(METADATA_TEXT, numberish)),
    metadata_kind=st.sampled_from(["object", "string", "array", "null"]),
    tags=st.one_of(st.none(), json_values, st.lists(st.one_of(st.none(), st.text(max_size=30)), max_size=4)),
    api_base=st.one_of(
        st.none(), st.text(max_size=30), st.sampled_from(["http://[10.0.0.5:8000/v1", "http://h:8a/v1"])
    ),
    status=st.one_of(st.none(), st.text(max_size=8)),
    prompt=st.integers(min_value=0, max_value=10**6),
    completion=st.integers(min_value=0, max_value=10**6),
)
def test_no_metadata_breaks_the_transform(
    *,
    values: dict[str, Any],
    metadata_kind: str,
    tags: Any,
    api_base: str | None,
    status: str | None,
    prompt: int,
    completion: int,
) -> None:
    """Whatever LiteLLM (or a bug in it) leaves in a row, the transform keeps or drops the
    row, never raises, and what it keeps respects the store's invariants."""
    metadata: Any = {}
    for name, path in METADATA_TEXT.items():
        node = metadata
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = values[name]
    metadata = {"object": metadata, "string": json.dumps(metadata), "array": [metadata], "null": None}[
        metadata_kind
    ]
    row = spend_log(
        metadata=metadata,
        request_tags=tags,
        api_base=api_base,
        status=status,
        prompt_tokens=prompt,
        completion_tokens=completion,
    )
    out = run([row])
    assert out.table.schema == REQUESTS_SCHEMA
    assert out.table.num_rows + sum(out.dropped.values()) == 1
    for r in out.table.to_pylist():
        assert 0 <= r["cached_tokens"] <= r["prompt_tokens"]
        assert 0 <= r["reasoning_tokens"] <= r["completion_tokens"]
        assert r["cache_creation_tokens"] >= 0 and r["duration_ms"] >= 0
        assert r["status"] in ("success", "failure") and r["node"] and r["client"] and r["user"]
        assert all(isinstance(t, str) for t in r["request_tags"])
