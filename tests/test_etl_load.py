"""Folding staged rows into day files: first copy wins, full refresh replaces, files stay whole."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contract.store import day_file
from etl import load
from etl.extract import table_from_rows
from etl.transform import Rules, Transformed, transform
from tests.litellm_db import spend_log

NOW = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
DAY = dt.date(2026, 11, 20)
T0 = dt.datetime(2026, 11, 20, 8, 0)


def rows(*specs: tuple[str, int]) -> Transformed:
    """Store rows with the given request_ids and prompt sizes, all on DAY."""
    return transform(
        table_from_rows(
            spend_log(
                request_id=rid,
                start=T0 + dt.timedelta(minutes=i),
                prompt_tokens=prompt,
                total_tokens=prompt + 193,
            )
            for i, (rid, prompt) in enumerate(specs)
        ),
        Rules(),
        NOW,
    )


def stored(store: Path) -> dict[str, int]:
    table = pq.read_table(day_file(store, DAY))
    return dict(zip(table["request_id"].to_pylist(), table["prompt_tokens"].to_pylist(), strict=True))


def stage(store: Path, run: str, *batches: Transformed, full: bool = False) -> load.Staging:
    staging = load.Staging(store, run)
    for out in batches:
        staging.add(out.table, out.dropped_rows if full else None)
    return staging


def test_the_first_copy_of_a_request_id_wins_within_a_run_and_across_runs(tmp_path: Path) -> None:
    store = tmp_path
    staging = stage(store, "r1", rows(("a", 5000), ("b", 5000)), rows(("a", 6000)))
    merged = load.merge_day(store, DAY, staging.kept(DAY))
    assert (merged.written, merged.already_stored) == (2, 1)
    assert stored(store) == {"a": 5000, "b": 5000}
    staging = stage(store, "r2", rows(("b", 7000), ("c", 7000)))
    merged = load.merge_day(store, DAY, staging.kept(DAY))
    assert (merged.written, merged.already_stored) == (1, 1)
    assert stored(store) == {"a": 5000, "b": 5000, "c": 7000}


def test_nothing_new_leaves_the_file_untouched(tmp_path: Path) -> None:
    load.merge_day(tmp_path, DAY, stage(tmp_path, "r1", rows(("a", 5000))).kept(DAY))
    before = day_file(tmp_path, DAY).stat().st_mtime_ns
    merged = load.merge_day(tmp_path, DAY, stage(tmp_path, "r2", rows(("a", 5000))).kept(DAY))
    assert merged.written == 0 and day_file(tmp_path, DAY).stat().st_mtime_ns == before


def test_a_full_refresh_replaces_what_the_source_still_has_and_keeps_the_rest(tmp_path: Path) -> None:
    load.merge_day(
        tmp_path, DAY, stage(tmp_path, "r1", rows(("a", 5000), ("gone", 5000), ("noisy", 5000))).kept(DAY)
    )
    noise = transform(table_from_rows([spend_log("master_key", request_id="noisy", start=T0)]), Rules(), NOW)
    staging = stage(tmp_path, "r2", rows(("a", 9000), ("new", 9000)), noise, full=True)
    merged = load.merge_day(tmp_path, DAY, staging.kept(DAY), replace=staging.seen(DAY))
    assert stored(tmp_path) == {"gone": 5000, "a": 9000, "new": 9000}
    assert (merged.written, merged.already_stored) == (2, 1)


def test_a_full_refresh_of_a_day_of_noise_creates_no_file(tmp_path: Path) -> None:
    noise = transform(table_from_rows([spend_log("health_check", start=T0)]), Rules(), NOW)
    staging = stage(tmp_path, "r1", noise, full=True)
    assert staging.days() == [DAY] and staging.kept(DAY) == []
    merged = load.merge_day(tmp_path, DAY, staging.kept(DAY), replace=staging.seen(DAY))
    assert merged.written == 0 and not day_file(tmp_path, DAY).exists()


def test_many_small_appends_do_not_fragment_the_day_file(tmp_path: Path) -> None:
    for run in range(5):
        batch = rows(*((f"r{run}-{i}", 100) for i in range(30)))
        load.merge_day(tmp_path, DAY, stage(tmp_path, f"run{run}", batch).kept(DAY))
    meta = pq.ParquetFile(day_file(tmp_path, DAY)).metadata
    assert meta.num_rows == 150 and meta.num_row_groups == 1
    assert not [p for p in tmp_path.rglob("*") if ".tmp-" in p.name]


def test_appended_runs_keep_the_schema(tmp_path: Path) -> None:
    load.merge_day(tmp_path, DAY, stage(tmp_path, "r1", rows(("a", 1))).kept(DAY))
    schema = pq.read_schema(day_file(tmp_path, DAY))
    assert schema.field("start_time").type == pa.timestamp("us", tz="UTC")
    assert "date" not in schema.names  # the partition lives in the directory name


def test_a_damaged_day_file_is_set_aside_and_the_day_written_from_the_new_rows(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """One damaged day must not stop every run: its file is renamed beside it (kept for
    repair, named in the log and on the page) and the new rows land."""
    load.merge_day(tmp_path, DAY, stage(tmp_path, "r1", rows(("a", 1))).kept(DAY))
    path = day_file(tmp_path, DAY)
    damaged = path.read_bytes()[:100]  # truncated, as a full disk might leave it
    path.write_bytes(damaged)
    merged = load.merge_day(tmp_path, DAY, stage(tmp_path, "r2", rows(("b", 1))).kept(DAY))
    assert merged.written == 1 and merged.set_aside is not None
    assert merged.set_aside.parent == path.parent and merged.set_aside.read_bytes() == damaged
    assert pq.read_table(path)["request_id"].to_pylist() == ["b"]
    assert merged.set_aside.name in caplog.text and "--full-refresh" in caplog.text
