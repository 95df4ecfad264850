"""`python -m etl run --metrics-file`: what node_exporter's textfile collector reads, after
good runs and failed ones, parsed as Prometheus parses it."""

from __future__ import annotations

import datetime as dt
import os
import re
import stat
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from etl import health
from settings.errors import ConfigError
from tests.litellm_db import LiteLLMDatabase, iter_sample_rows
from tests.test_etl_cli import REPO, cli


def samples(path: Path) -> dict[str, float]:
    """name{labels} -> value, for every sample in the file."""
    out = {}
    for family in text_string_to_metric_families(path.read_text(encoding="utf-8")):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            out[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
    return out


def test_a_good_run_then_a_failed_one(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    litellm.insert_spend_logs(iter_sample_rows())
    store, prom = tmp_path / "store", tmp_path / "textfile" / "llm_usage_etl.prom"
    prom.parent.mkdir()
    before = time.time()
    result = cli("run", "--source", litellm.url, "--store", str(store), "--metrics-file", str(prom))
    assert result.returncode == 0, result.stderr
    good = samples(prom)
    assert good["llm_usage_etl_last_run_success"] == 1
    assert good["llm_usage_etl_last_run_rows_read"] == 12
    assert good["llm_usage_etl_last_run_rows_written"] == 8
    assert good["llm_usage_etl_last_run_noise_dropped{reason=master_key}"] == 2
    assert good["llm_usage_etl_last_run_noise_dropped{reason=health_check}"] == 2
    assert good["llm_usage_etl_last_run_noise_dropped{reason=rule}"] == 0
    assert good["llm_usage_etl_runs_failed_total"] == 0
    assert good["llm_usage_etl_consecutive_failures"] == 0
    assert before - 1 <= good["llm_usage_etl_last_success_timestamp_seconds"] <= time.time()
    assert good["llm_usage_etl_last_run_duration_seconds"] > 0
    # LiteLLM's key list (none of its keys has a budget) was copied: budgets were forecast
    assert good["llm_usage_budget_metrics_success"] == 1

    # the database goes away: the last success stays what it was, the failure shows
    for attempt in (1, 2):
        result = cli(
            "run", "--source", "postgresql://lab@127.0.0.1:1/litellm", "--store", str(store),
            "--metrics-file", str(prom),
        )  # fmt: skip
        assert result.returncode == 69
        bad = samples(prom)
        assert bad["llm_usage_etl_last_run_success"] == 0
        assert bad["llm_usage_etl_consecutive_failures"] == attempt
        assert bad["llm_usage_etl_runs_failed_total"] == attempt
        assert bad["llm_usage_budget_metrics_success"] == 1  # from the key list the store has
        assert (
            bad["llm_usage_etl_last_success_timestamp_seconds"]
            == good["llm_usage_etl_last_success_timestamp_seconds"]
        )
        last_run = "llm_usage_etl_last_run_timestamp_seconds"
        assert bad[last_run] > good[last_run]
    assert [p.name for p in prom.parent.iterdir()] == ["llm_usage_etl.prom"]  # no temporary files left


def test_a_run_that_never_reaches_the_store_still_reports(tmp_path: Path) -> None:
    """A broken configuration is a failure the alert must see too."""
    config = tmp_path / "usage.toml"
    config.write_text("[source\n", encoding="utf-8")
    prom = tmp_path / "etl.prom"
    result = cli("run", "--config", str(config), "--metrics-file", str(prom))
    assert result.returncode == 2
    got = samples(prom)
    assert got["llm_usage_etl_last_run_success"] == 0
    assert got["llm_usage_etl_last_success_timestamp_seconds"] == 0  # never
    assert got["llm_usage_etl_consecutive_failures"] == 1
    assert got["llm_usage_budget_metrics_success"] == 0  # no store to forecast budgets from


def test_an_unwritable_metrics_file_is_an_error_but_the_run_counts(
    litellm: LiteLLMDatabase, tmp_path: Path
) -> None:
    litellm.insert_spend_logs(iter_sample_rows())
    store = tmp_path / "store"
    prom = "/proc/such.prom"  # a folder where no file can be made, even by root
    result = cli("run", "--source", litellm.url, "--store", str(store), "--metrics-file", prom)
    assert result.returncode == 73
    assert "could not write the metrics file /proc/such.prom" in result.stderr
    assert "8 written" in result.stdout


def test_the_readme_alert_uses_metrics_the_file_has(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    prom = tmp_path / "etl.prom"
    result = cli("run", "--source", litellm.url, "--store", str(tmp_path / "s"), "--metrics-file", str(prom))
    assert result.returncode == 0, result.stderr
    readme = (REPO / "docs" / "operations.md").read_text(encoding="utf-8")
    named = set(re.findall(r"llm_usage_etl_[a-z_]+", readme))
    assert "llm_usage_etl_last_success_timestamp_seconds" in named
    written = {name.split("{")[0] for name in samples(prom)}
    assert named <= written, named - written


# --- issue 27, point 6: the metrics file goes only where it should ------------------------------


@pytest.mark.parametrize("kind", ["missing folder", "directory", "pipe", "symbolic link"])
def test_a_metrics_path_that_is_not_a_file_in_a_folder_is_refused(
    litellm: LiteLLMDatabase, tmp_path: Path, kind: str
) -> None:
    """A special file stands for /dev/full: run as root, a rename over it replaced the device."""
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("someone else's", encoding="utf-8")
    prom = tmp_path / "textfile" / "llm_usage_etl.prom"
    named = {"directory": "a directory", "pipe": "a pipe", "symbolic link": "a symbolic link"}.get(
        kind, "does not exist"
    )
    if kind != "missing folder":
        prom.parent.mkdir()
    if kind == "directory":
        prom.mkdir()
    elif kind == "pipe":
        os.mkfifo(prom)
    elif kind == "symbolic link":
        prom.symlink_to(elsewhere)
    before = prom.lstat().st_mode if kind != "missing folder" else None
    store = tmp_path / "store"

    result = cli(
        "run", "--source", litellm.url, "--store", str(store), "--metrics-file", str(prom), timeout=60
    )

    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert f"--metrics-file {prom}" in result.stderr and named in result.stderr
    assert not store.exists()  # a bad command line: nothing is run
    if before is None:
        assert not prom.parent.exists()
    else:
        assert prom.lstat().st_mode == before and stat.S_IFMT(before) != stat.S_IFREG
        assert [p.name for p in prom.parent.iterdir()] == [prom.name]  # no temporary file left
    assert elsewhere.read_text(encoding="utf-8") == "someone else's"
    # and when the path turns bad during a run, the write refuses as well
    attempt = health.Attempt(dt.datetime.now(dt.UTC), ok=True, seconds=1.0)
    with pytest.raises(ConfigError, match=named):
        health.write(prom, attempt, None)
