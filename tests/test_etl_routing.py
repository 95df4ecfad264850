"""The router's words on each request (issue 18): fallbacks and retries made, the model
group asked for, LiteLLM's own time. From a real LiteLLM database, in rows of the shape
LiteLLM writes; unknown stays NULL, never 0, and junk never breaks a run."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contract.store import ADDED_COLUMNS, REQUESTS_FILE_SCHEMA, day_file
from etl.extract import table_from_rows
from etl.run import ingest_rows, run_etl
from etl.transform import Rules, transform
from queries.window import empty_day
from settings.config import Config, load_config
from tests import storeview
from tests.litellm_db import LiteLLMDatabase, iter_sample_rows, samples, spend_log

T0 = dt.datetime(2026, 11, 20, 9, 0)
ROUTING = ("attempted_fallbacks", "attempted_retries", "original_model_group", "litellm_overhead_ms")
KEYS = ("attempted_fallbacks", "attempted_retries", "original_model_group", "litellm_overhead_time_ms")


def routed(metadata: dict[str, Any], start: dt.datetime = T0) -> dict[str, Any]:
    """A llama.cpp row (LiteLLM 1.108.7) with these routing keys in its metadata; a key
    given as None is left out, as releases before it do."""
    return spend_log("llamacpp_non_streamed", start=start, metadata=metadata)


def with_json_null(row: dict[str, Any]) -> dict[str, Any]:
    """The keys present and null, as LiteLLM writes them for a request its router never saw."""
    row["metadata"].update(dict.fromkeys(KEYS))
    return row


def fallback_row() -> dict[str, Any]:
    """Served by the first fallback after two retries on the group asked for."""
    return routed(
        {
            "attempted_fallbacks": 1,
            "attempted_retries": 2,
            "original_model_group": "gpt-oss-120b",
            "litellm_overhead_time_ms": 12.3456,
        }
    )


def etl(db: LiteLLMDatabase, store: Path, **kwargs: Any) -> Any:
    return run_etl(load_config(None, source=db.url, store=store, env={}), **kwargs)


def routing_of(store: Path, request_id: str) -> tuple[Any, ...]:
    row = storeview.rows(store)[request_id]
    return tuple(row[c] for c in ROUTING)


def test_samples_carry_what_litellm_wrote() -> None:
    out = transform(table_from_rows(iter_sample_rows()), Rules(), dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    rows = {r["request_id"]: r for r in out.table.to_pylist()}
    s = samples()

    def routing(kind: str) -> tuple[Any, ...]:
        return tuple(rows[s[kind]["request_id"]][c] for c in ROUTING)

    assert routing("llamacpp_non_streamed") == (0, 0, "qwen3-coder-30b", pytest.approx(20.1492))
    assert routing("vllm_streamed_reasoning_cached") == (0, 0, "gpt-oss-120b", None)  # streamed: no overhead
    assert routing("failure_before_routing") == (None, None, None, None)  # the router never saw it
    assert out.malformed == 0


def test_fallbacks_retries_and_overhead_from_a_real_database(litellm: LiteLLMDatabase, store: Path) -> None:
    fallback = fallback_row()
    absent = routed(dict.fromkeys(KEYS))  # a release before the keys
    null = with_json_null(routed({}))
    junk = [
        routed(
            {
                "attempted_fallbacks": "1",  # a JSON string, though it reads like a number
                "attempted_retries": -2,
                "litellm_overhead_time_ms": "fast",
                "original_model_group": "",
            }
        ),
        routed(
            {"attempted_fallbacks": True, "attempted_retries": {"n": 2}, "litellm_overhead_time_ms": -0.5}
        ),
        routed({"attempted_fallbacks": 1.5, "attempted_retries": 10**30, "litellm_overhead_time_ms": 1e12}),
    ]
    litellm.insert_spend_logs([fallback, absent, null, *junk])
    summary = etl(litellm, store)

    assert summary.rows_written == 6
    assert routing_of(store, fallback["request_id"]) == (1, 2, "gpt-oss-120b", pytest.approx(12.3456))
    assert storeview.rows(store)[fallback["request_id"]]["model_group"] == "qwen3-coder-30b"  # who served it
    for row in (absent, null, junk[0]):
        assert routing_of(store, row["request_id"]) == (None, None, None, None)
    for row in junk[1:]:  # the sample's own group asked for stays
        assert routing_of(store, row["request_id"]) == (None, None, "qwen3-coder-30b", None)
    # junk is counted and named, and stops nothing; unknown is not junk
    [run] = storeview.runs(store)
    assert (run["status"], run["rows_malformed"]) == ("ok", 3)
    assert summary.malformed == 3 and "attempted_fallbacks" in " ".join(summary.malformed_examples)

    # rows from Python (the demo, tests) come out the same as rows from PostgreSQL
    ingest_rows(Config(store=store.parent / "python"), [fallback, absent, null, *junk])
    python = storeview.requests(store.parent / "python").select(["request_id", *ROUTING])
    assert python.equals(storeview.requests(store).select(["request_id", *ROUTING]))


# Day files written before these columns: before issue 17 (lacking all the added columns)
# and after it (lacking only the router's four).
LAYOUTS = {"before issue 17": len(ADDED_COLUMNS), "issue 17": len(ROUTING)}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_day_file_of_an_older_layout_reads_upgrades_and_backfills(
    litellm: LiteLLMDatabase, store: Path, layout: str
) -> None:
    fallback = fallback_row()
    failure = spend_log("failure_after_routing", start=T0 + dt.timedelta(minutes=1))
    litellm.insert_spend_logs([fallback, failure])
    etl(litellm, store)
    day = day_file(store, T0.date())
    lacking = list(REQUESTS_FILE_SCHEMA.names[-LAYOUTS[layout] :])
    assert set(ROUTING) <= set(lacking)
    older = pq.read_table(day).drop_columns(lacking)
    pq.write_table(older, day)

    # readers take the missing columns as NULL (their file list starts with an empty file
    # of every column)
    read = (
        duckdb.connect()
        .execute(
            f"SELECT request_id, {', '.join(ROUTING)} FROM read_parquet(?, union_by_name = true) "
            "WHERE request_id = ?",
            [[str(empty_day()), str(day)], fallback["request_id"]],
        )
        .fetchall()
    )
    assert read == [(fallback["request_id"], None, None, None, None)]

    # the next run that adds rows to the day writes it anew in this version's layout, the
    # rows it held with NULL (unknown), not 0
    later = routed({"original_model_group": "qwen3-coder-30b"}, T0 + dt.timedelta(hours=1))
    litellm.insert_spend_logs([later])
    etl(litellm, store)
    upgraded = pq.read_table(day)
    assert upgraded.schema == REQUESTS_FILE_SCHEMA
    assert upgraded.num_rows == 3
    assert routing_of(store, fallback["request_id"]) == (None, None, None, None)
    assert routing_of(store, later["request_id"])[:3] == (0, 0, "qwen3-coder-30b")
    kept_code = storeview.rows(store)[failure["request_id"]]["error_code"]
    assert kept_code == (None if layout == "before issue 17" else "500")

    # --full-refresh derives them for the rows LiteLLM still has
    summary = etl(litellm, store, full_refresh=True)
    assert summary.mode == "full_refresh"
    assert routing_of(store, fallback["request_id"]) == (1, 2, "gpt-oss-120b", pytest.approx(12.3456))
    assert routing_of(store, failure["request_id"]) == (0, 0, "gpt-oss-120b", None)
    assert storeview.rows(store)[failure["request_id"]]["error_code"] == "500"
    assert pq.read_table(day).schema == REQUESTS_FILE_SCHEMA


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=5,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.fixed_dictionaries(dict.fromkeys(KEYS, json_values)), as_text=st.booleans())
def test_no_routing_value_breaks_the_transform(values: dict[str, Any], *, as_text: bool) -> None:
    """Whatever sits under these keys, the row is kept and each column is NULL or sane."""
    metadata = {**samples()["llamacpp_non_streamed"]["metadata"], **values}
    row = spend_log("llamacpp_non_streamed", metadata=json.dumps(metadata) if as_text else metadata)
    out = transform(table_from_rows([row]), Rules(), dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    [stored] = out.table.to_pylist()
    for column in ("attempted_fallbacks", "attempted_retries"):
        assert stored[column] is None or 0 <= stored[column] <= 1000
    overhead = stored["litellm_overhead_ms"]
    assert overhead is None or 0 <= overhead <= 86_400_000
    assert stored["original_model_group"] is None or isinstance(stored["original_model_group"], str)
    # a number stays the number LiteLLM wrote
    if type(values["attempted_fallbacks"]) is int and 0 <= values["attempted_fallbacks"] <= 1000:
        assert stored["attempted_fallbacks"] == values["attempted_fallbacks"]


def test_unknown_is_never_zero_in_a_store_of_mixed_releases(tmp_path: Path) -> None:
    """Sums and averages over these columns skip what LiteLLM did not say."""
    rows = [fallback_row(), routed(dict.fromkeys(KEYS)), with_json_null(routed({}))]
    ingest_rows(Config(store=tmp_path / "store"), rows)
    table = storeview.requests(tmp_path / "store")
    assert pc.sum(table["attempted_fallbacks"]).as_py() == 1
    assert table["attempted_fallbacks"].null_count == 2
    assert pc.mean(table["litellm_overhead_ms"]).as_py() == pytest.approx(12.3456)
    assert table.schema.field("litellm_overhead_ms").type == pa.float64()
