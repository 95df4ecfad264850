"""Crash safety: kill -9 anywhere, then run again, and the store is what an uninterrupted
run makes. Two runs at once: the second leaves at once with exit code 75."""

from __future__ import annotations

import datetime as dt
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests import storeview
from tests.litellm_db import LiteLLMDatabase, iter_sample_rows, spend_log

REPO = Path(__file__).resolve().parent.parent
T0 = dt.datetime(2026, 11, 1, 0, 0)
CONFIG = "[source]\nchunk_rows = 150\n"


def etl_process(
    db: LiteLLMDatabase, store: Path, *args: str, failpoint: str | None = None
) -> subprocess.Popen[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("LITELLM_DATABASE_URL", "DATABASE_URL", "USAGE_STORE")
    }
    config = store.parent / "crash.toml"
    config.write_text(CONFIG, encoding="utf-8")
    if failpoint:
        env["ETL_FAILPOINT"] = failpoint
    else:
        env.pop("ETL_FAILPOINT", None)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "etl",
            "run",
            "--source",
            db.url,
            "--store",
            str(store),
            "--config",
            str(config),
            *args,
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def etl_cli(
    db: LiteLLMDatabase, store: Path, *args: str, failpoint: str | None = None
) -> subprocess.CompletedProcess[str]:
    proc = etl_process(db, store, *args, failpoint=failpoint)
    out, err = proc.communicate(timeout=180)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def fill(db: LiteLLMDatabase, n: int, start: dt.datetime, days: int) -> None:
    step = dt.timedelta(days=days) / n
    db.insert_spend_logs(
        spend_log(start=start + i * step, created_at=start + i * step + dt.timedelta(seconds=15))
        for i in range(n)
    )


@pytest.fixture
def source(litellm: LiteLLMDatabase) -> LiteLLMDatabase:
    """1,200 requests over 20 days plus LiteLLM's noise: 8 chunks, 20 day files."""
    litellm.insert_spend_logs(iter_sample_rows(), created_at=T0)
    fill(litellm, 1200, T0, 20)
    return litellm


@pytest.fixture
def reference(source: LiteLLMDatabase, tmp_path: Path) -> dict[str, Any]:
    store = tmp_path / "reference" / "store"
    store.parent.mkdir()
    assert etl_cli(source, store).returncode == 0
    return storeview.content(store)


@pytest.mark.parametrize(
    "point",
    ["chunk-staged#3", "day-merged#1", "day-merged#9", "snapshots-written", "state-written"],
)
def test_kill_at_each_step_then_rerun_gives_the_same_store(
    source: LiteLLMDatabase, reference: dict[str, Any], store: Path, point: str
) -> None:
    killed = etl_cli(source, store, failpoint=f"{point}=kill")
    assert killed.returncode == -signal.SIGKILL
    if point == "day-merged#9":
        # the interesting case: some days replaced, the bookmark not yet moved
        assert 0 < len(list((store / "requests").glob("*/*.parquet"))) < 23
        assert not (store / "state.json").exists()
    again = etl_cli(source, store)
    assert again.returncode == 0, again.stderr
    assert storeview.content(store) == reference
    assert not [p for p in store.rglob("*") if ".tmp-" in p.name]


def test_kill_during_an_incremental_run(source: LiteLLMDatabase, tmp_path: Path) -> None:
    stores = {name: tmp_path / name / "store" for name in ("clean", "killed")}
    for store in stores.values():
        store.parent.mkdir()
        assert etl_cli(source, store).returncode == 0
    fill(source, 300, T0 + dt.timedelta(days=20), 3)
    assert etl_cli(source, stores["clean"]).returncode == 0
    assert etl_cli(source, stores["killed"], failpoint="day-merged#2=kill").returncode == -signal.SIGKILL
    assert etl_cli(source, stores["killed"]).returncode == 0
    assert storeview.content(stores["killed"]) == storeview.content(stores["clean"])
    assert storeview.requests(stores["killed"]).num_rows == 1508


def test_kill_at_random_moments(source: LiteLLMDatabase, reference: dict[str, Any], store: Path) -> None:
    rng = random.Random(20261203)
    began = time.monotonic()
    assert etl_cli(source, store).returncode == 0
    duration = time.monotonic() - began
    for _ in range(4):
        for path in sorted(store.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        proc = etl_process(source, store)
        time.sleep(rng.uniform(0.1, duration))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        assert etl_cli(source, store).returncode == 0
        assert storeview.content(store) == reference


def test_a_second_run_leaves_at_once_touching_nothing(source: LiteLLMDatabase, store: Path) -> None:
    first = etl_process(source, store, failpoint="chunk-staged#1=sleep:6")
    deadline = time.monotonic() + 30
    while not list((store / ".staging").glob("*/*/*.parquet")):
        assert time.monotonic() < deadline, "the first run never got going"
        assert first.poll() is None, first.communicate()
        time.sleep(0.05)
    time.sleep(0.5)  # the first run is now asleep at its failpoint, right after staging
    before = {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in store.rglob("*")}
    began = time.monotonic()
    second = etl_cli(source, store)
    waited = time.monotonic() - began
    after = {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in store.rglob("*")}
    assert second.returncode == 75
    assert "another ETL run" in second.stderr and str(first.pid) in second.stderr
    assert waited < 5
    assert after == before
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert storeview.requests(store).num_rows == 1208
    assert [r["status"] for r in storeview.runs(store)] == ["ok"]


def _totals_from_the_day_files(store: Path) -> tuple[int, float]:
    import duckdb

    files = str(store / "requests" / "date=*" / "part-0.parquet")
    row = duckdb.connect().execute(f"SELECT count(*), sum(spend) FROM read_parquet('{files}')").fetchone()
    assert row is not None
    return int(row[0]), float(row[1])


@pytest.mark.parametrize("point", ["day-merged#1", "day-merged#9"])
def test_a_kill_between_a_day_file_and_its_rollup_never_shows_stale_numbers(
    source: LiteLLMDatabase, reference: dict[str, Any], store: Path, point: str
) -> None:
    """A full refresh rewrites every day file; killed right after one is replaced, before
    its rollup, the reader must sum that day from its file, and the next run rebuild it."""
    from etl import rollup
    from queries.runner import StoreReader

    first = etl_cli(source, store)
    assert first.returncode == 0, first.stderr
    assert rollup.missing(store, "Asia/Seoul") == []
    killed = etl_cli(source, store, "--full-refresh", failpoint=f"{point}=kill")
    assert killed.returncode == -signal.SIGKILL
    stale = rollup.missing(store, "Asia/Seoul")
    assert stale, "the kill should leave a day file newer than its rollup"
    requests, spend = _totals_from_the_day_files(store)
    totals = StoreReader(store).run("totals").iloc[0]
    assert (totals["requests"], totals["spend_usd"]) == (requests, pytest.approx(spend, rel=1e-9))
    assert etl_cli(source, store).returncode == 0
    assert rollup.missing(store, "Asia/Seoul") == []
    days = len(list((store / "requests").glob("*/*")))
    assert len(list((store / "rollups").glob("*/rollup-*.parquet"))) == days  # the stale ones are gone
    assert len(list((store / "rollups").glob("*/series-*.parquet"))) == days
    totals = StoreReader(store).run("totals").iloc[0]
    assert totals["requests"] == _totals_from_the_day_files(store)[0] == 1208
    assert storeview.content(store) == reference
