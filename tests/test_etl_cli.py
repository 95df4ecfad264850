"""`python -m etl` as cron and a person use it: defaults, messages, exit codes, secrets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import storeview
from tests.litellm_db import LiteLLMDatabase, iter_sample_rows

REPO = Path(__file__).resolve().parent.parent


def cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path = REPO, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "DATABASE_URL", "USAGE_"))}
    base["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "etl", *args],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_help_explains_the_commands_and_exit_codes() -> None:
    top = cli("--help")
    run = cli("run", "--help")
    assert top.returncode == 0 and run.returncode == 0
    assert "run" in top.stdout and "75" in top.stdout
    for flag in ("--source", "--store", "--config", "--full-refresh", "LITELLM_DATABASE_URL", "USAGE_STORE"):
        assert flag in run.stdout


def test_source_and_store_from_the_environment_and_a_summary_line(
    litellm: LiteLLMDatabase, tmp_path: Path
) -> None:
    litellm.insert_spend_logs(iter_sample_rows())
    # DATABASE_URL as LiteLLM's own config holds it: Prisma's postgres:// with its options
    prisma_url = litellm.url.replace("postgresql://", "postgres://") + "?schema=public&connection_limit=5"
    result = cli("run", env={"DATABASE_URL": prisma_url}, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "12 rows read, 8 written, 0 duplicates skipped" in result.stdout
    assert "2 master key, 2 health check, 0 by rule" in result.stdout
    assert storeview.requests(tmp_path / "data").num_rows == 8  # ./data by default
    other = tmp_path / "elsewhere"
    result = cli("run", env={"LITELLM_DATABASE_URL": litellm.url, "USAGE_STORE": str(other)}, cwd=tmp_path)
    assert result.returncode == 0 and storeview.requests(other).num_rows == 8


def test_an_unreachable_database(tmp_path: Path) -> None:
    result = cli(
        "run", "--source", "postgresql://lab:hunter2@127.0.0.1:1/litellm", "--store", str(tmp_path / "s")
    )
    assert result.returncode == 69
    assert "cannot connect to the LiteLLM database postgresql://lab@127.0.0.1:1/litellm" in result.stderr
    assert "hunter2" not in result.stderr + result.stdout
    runs = storeview.runs(tmp_path / "s")
    assert runs[0]["status"] == "failed" and "hunter2" not in (runs[0]["error"] or "")


def test_the_wrong_database(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    wrong = litellm.url.rsplit("/", 1)[0] + "/postgres"
    result = cli("run", "--source", wrong, "--store", str(tmp_path / "s"))
    assert result.returncode == 66
    assert "no table LiteLLM_SpendLogs in database postgres" in result.stderr


def test_a_store_that_cannot_be_written(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    result = cli("run", "--source", litellm.url, "--store", str(blocker / "store"))
    assert result.returncode == 73
    assert "cannot create the store directory" in result.stderr


def test_no_source_configured(tmp_path: Path) -> None:
    result = cli("run", "--store", str(tmp_path / "s"))
    assert result.returncode == 2
    assert "LITELLM_DATABASE_URL" in result.stderr
    assert not (tmp_path / "s" / "requests").exists()


def test_a_source_that_is_not_postgresql(tmp_path: Path) -> None:
    result = cli("run", "--source", "mysql://root@localhost/litellm", "--store", str(tmp_path / "s"))
    assert result.returncode == 2 and "must be a PostgreSQL URL" in result.stderr


def test_secrets_appear_nowhere(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    """The database password and the master key: not in the output, not in the store."""
    litellm.insert_spend_logs(iter_sample_rows())
    url = litellm.url.replace("postgres@", "postgres:s3cret-db-pass@")  # trust auth ignores it
    store = tmp_path / "store"
    result = cli(
        "run", "--source", url, "--store", str(store), env={"LITELLM_MASTER_KEY": "sk-master-s3cret"}
    )
    assert result.returncode == 0, result.stderr
    everything = result.stdout + result.stderr
    stored = b"".join(p.read_bytes() for p in store.rglob("*") if p.is_file())
    for secret in ("s3cret-db-pass", "sk-master-s3cret"):
        assert secret not in everything and secret.encode() not in stored


def test_passwords_in_url_options_or_unencoded_are_never_echoed(tmp_path: Path) -> None:
    result = cli(
        "run",
        "--source",
        "postgresql://lab@127.0.0.1:1/litellm?password=hunter2",
        "--store",
        str(tmp_path / "s"),
    )
    assert result.returncode == 69 and "hunter2" not in result.stderr
    assert "postgresql://lab@127.0.0.1:1/litellm" in result.stderr
    result = cli(
        "run", "--source", "postgresql://lab:hunt@er2@127.0.0.1/litellm", "--store", str(tmp_path / "s")
    )
    assert result.returncode == 2 and "%40" in result.stderr and "er2" not in result.stderr


def test_losing_the_database_mid_run_is_reported_as_such(litellm: LiteLLMDatabase, tmp_path: Path) -> None:
    import time

    from tests.litellm_db import spend_log

    litellm.insert_spend_logs(spend_log() for _ in range(400))
    store = tmp_path / "s"
    (tmp_path / "small.toml").write_text("[source]\nchunk_rows = 100\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "etl",
            "run",
            "--source",
            litellm.url,
            "--store",
            str(store),
            "--config",
            str(tmp_path / "small.toml"),
        ],
        cwd=REPO,
        env={**os.environ, "ETL_FAILPOINT": "chunk-staged#1=sleep:3"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(1.5)  # the run is asleep after its first chunk, its cursor open
    killed = litellm.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE application_name = 'litellm-usage-etl' AND datname = %s",
        [litellm.name],
    )
    _, err = proc.communicate(timeout=60)
    assert killed, "the ETL's connection was not found"
    assert proc.returncode == 69, err
    assert "lost the connection to the LiteLLM database" in err
    assert not (store / "requests").exists()
    assert storeview.runs(store)[-1]["status"] == "failed"


# --- issue 27, point 5: a configuration or price book that is not a TOML file ------------------

NOWHERE = "postgresql://lab@127.0.0.1:1/litellm"  # never reached: the configuration comes first


def not_a_toml_file(folder: Path, kind: str) -> tuple[Path, str]:
    """A file given by mistake as the configuration or the price book, and a word the one
    line naming it must hold."""
    path = folder / f"{kind}.toml"
    if kind == "latin-1":
        path.write_bytes('[dashboard]\ntimezone = "Europe/Zürich"\n'.encode("latin-1"))
        return path, "not UTF-8"
    if kind == "nested-arrays":
        path.write_text("x = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
        return path, "levels deep"
    if kind == "nested-keys":
        path.write_text("[dashboard]\ntimezone" + ".a" * 5000 + " = 1\n", encoding="utf-8")
        return path, "levels deep"
    if kind == "directory":
        path.mkdir()
        return path, "a directory"
    if kind == "pipe":
        os.mkfifo(path)  # nothing ever writes it: reading it would wait for ever
        return path, "a pipe"
    return Path("/dev/null"), "a device"


KINDS = ("latin-1", "nested-arrays", "nested-keys", "directory", "pipe", "device")


@pytest.mark.parametrize("kind", KINDS)
def test_a_configuration_file_that_is_not_a_toml_file_is_one_line(tmp_path: Path, kind: str) -> None:
    path, named = not_a_toml_file(tmp_path, kind)
    result = cli(
        "run", "--source", NOWHERE, "--store", str(tmp_path / "s"), "--config", str(path), timeout=30
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert f"configuration file {path}" in result.stderr and named in result.stderr

    doctor = cli(
        "doctor", "--source", NOWHERE, "--store", str(tmp_path / "s"), "--config", str(path), timeout=30
    )
    assert doctor.returncode == 3 and "Traceback" not in doctor.stderr
    [line] = [ln for ln in doctor.stdout.splitlines() if ln.startswith("FAIL  configuration")]
    assert named in line


@pytest.mark.parametrize("kind", KINDS)
def test_a_price_book_that_is_not_a_toml_file_is_one_line(tmp_path: Path, kind: str) -> None:
    path, named = not_a_toml_file(tmp_path, kind)
    config = tmp_path / "usage.toml"
    config.write_text(f"price_book = {str(path)!r}\n", encoding="utf-8")
    result = cli(
        "run", "--source", NOWHERE, "--store", str(tmp_path / "s"), "--config", str(config), timeout=30
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert f"price book {path}" in result.stderr and named in result.stderr
