"""`python -m etl doctor` against a real LiteLLM database and stores the ETL wrote: a
healthy installation is all OK and left untouched; each problem it knows about is named,
with its fix, on a deliberately broken database or store.

One module because it is one command's tests, sharing one LiteLLM database and the
stores built for it.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from psycopg import sql
from sqlalchemy.engine import make_url

from contract.state import State
from contract.store import (
    KEYS_FILE,
    LOCK_FILE,
    REQUESTS_FILE_SCHEMA,
    RUNS_FILE,
    STAGING_DIR,
    STATE_FILE,
    day_file,
    stored_days,
)
from etl import demo, doctor
from etl.errors import SourceUnreachable
from etl.run import run_etl, store_lock
from etl.state import write_state
from ops.cli import main
from settings.config import load_config
from tests import storeview
from tests.litellm_db import LiteLLMDatabase, iter_sample_rows, migration_dirs, spend_log

REPO = Path(__file__).resolve().parent.parent
DAY_ONE = dt.date(2026, 11, 20)
DAY_TWO = dt.date(2026, 11, 21)


@dataclass
class Report:
    code: int
    lines: list[str]

    def line(self, name: str) -> str:
        """The one line of check `name`."""
        found = [ln for ln in self.lines if re.match(rf"(OK|WARN|FAIL)\s+{re.escape(name)}\s\s", ln)]
        assert len(found) == 1, f"no single line for {name!r} in:\n" + "\n".join(self.lines)
        return found[0]

    def status(self, name: str) -> str:
        return self.line(name).split()[0]

    def statuses(self) -> set[str]:
        return {ln.split()[0] for ln in self.lines[:-1]}

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


Doctor = Callable[..., Report]


@pytest.fixture
def run_doctor(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Doctor:
    """`python -m etl doctor ARGS` in this process, with none of the caller's settings."""
    for name in list(os.environ):
        if name.startswith(("LITELLM_", "DATABASE_URL", "USAGE_")):
            monkeypatch.delenv(name)

    def run(*args: str) -> Report:
        capsys.readouterr()
        code = main(["doctor", *args])
        return Report(code, capsys.readouterr().out.splitlines())

    return run


def fill(db: LiteLLMDatabase, store: Path, *, full_refresh: bool = False) -> None:
    """Rows on several days (the samples, and two of our own days), loaded by a real run."""
    config = load_config(None, source=db.url, store=store, env={})
    run_etl(config, full_refresh=full_refresh)


@pytest.fixture
def healthy(litellm: LiteLLMDatabase, store: Path) -> tuple[LiteLLMDatabase, Path]:
    """A LiteLLM database as the proxy leaves it (Prisma's migration record included) and
    a store a run has just filled from it."""
    litellm.insert_spend_logs(iter_sample_rows())
    litellm.insert_spend_logs(
        spend_log(start=dt.datetime.combine(day, dt.time(9, 30))) for day in (DAY_ONE, DAY_TWO)
    )
    record_migrations(litellm)
    fill(litellm, store)
    return litellm, store


def record_migrations(db: LiteLLMDatabase) -> None:
    """`_prisma_migrations` as Prisma keeps it; the tests' databases are migrated without
    Prisma, so it is written here: every migration finished, and one that failed."""
    db.execute(
        'CREATE TABLE "_prisma_migrations" (id varchar(36) PRIMARY KEY, checksum varchar(64) NOT NULL, '
        "finished_at timestamptz, migration_name varchar(255) NOT NULL, logs text, "
        "rolled_back_at timestamptz, started_at timestamptz NOT NULL DEFAULT now(), "
        "applied_steps_count integer NOT NULL DEFAULT 0)"
    )
    names = [d.name for d in migration_dirs()]
    with db.connect() as conn, conn.cursor() as cur:
        cur.executemany(
            'INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name) '
            "VALUES (%s, '0', now(), %s)",
            [(uuid.uuid4().hex, name) for name in names],
        )
        cur.execute(
            'INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name) '
            "VALUES (%s, '0', NULL, '29991231000000_failed_halfway')",
            [uuid.uuid4().hex],
        )


def files(store: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(store)): (p.stat().st_mtime_ns, p.stat().st_size) for p in store.rglob("*")}


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", ""])
    proc.wait()
    return proc.pid


def cli(*args: str, env: dict[str, str], cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "DATABASE_URL", "USAGE_"))}
    base["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "etl", *args],
        cwd=cwd,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# --- a healthy installation ----------------------------------------------------------------


def test_a_healthy_installation_is_all_ok_and_left_untouched(
    healthy: tuple[LiteLLMDatabase, Path], tmp_path: Path
) -> None:
    litellm, store = healthy
    before = files(store)
    url = litellm.url.replace("postgres@", "postgres:s3cret-db-pass@")  # trust auth ignores it
    # as cron would run it: the source and the store from the environment
    result = cli("doctor", env={"LITELLM_DATABASE_URL": url, "USAGE_STORE": str(store)}, cwd=tmp_path)
    lines = result.stdout.splitlines()
    assert result.returncode == 0, result.stdout + result.stderr
    assert all(line.startswith("OK ") for line in lines[:-1]), result.stdout
    assert lines[-1].startswith("doctor: 22 OK, 0 WARN, 0 FAIL")
    report = Report(result.returncode, lines)
    newest = migration_dirs()[-1].name
    assert f"newest migration {newest}" in report.line("schema")  # not the failed one
    assert "runs use cursor created_at with a 10-minute overlap" in report.line("schema")
    assert "10 requests, each stored once" in report.line("request ids")
    assert "s3cret-db-pass" not in result.stdout + result.stderr
    assert files(store) == before  # read-only: not a byte, not a timestamp changed
    assert not (tmp_path / "data").exists()


def test_an_older_litellm_is_read_through_starttime(
    make_litellm_db: Callable[[str], LiteLLMDatabase], store: Path, tmp_path: Path, run_doctor: Doctor
) -> None:
    baseline = make_litellm_db("baseline")
    baseline.insert_spend_logs(iter_sample_rows())
    fill(baseline, store)
    report = run_doctor("--source", baseline.url, "--store", str(store))
    assert report.code == 0, report.text
    schema = report.line("schema")
    assert "no _prisma_migrations table" in schema
    assert "without status, session_id, request_duration_ms, created_at" in schema
    assert "runs use cursor startTime with a 120-minute overlap" in schema

    config = tmp_path / "usage.toml"
    config.write_text('[source]\ncursor = "created_at"\n', encoding="utf-8")
    report = run_doctor("--source", baseline.url, "--store", str(store), "--config", str(config))
    assert report.code == 3
    assert report.status("schema") == "FAIL"
    assert "has no created_at column" in report.line("schema")
    assert 'fix: set source.cursor = "auto"' in report.line("schema")


# --- the database --------------------------------------------------------------------------


def test_an_unreachable_database(healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor) -> None:
    _, store = healthy
    report = run_doctor("--source", "postgresql://lab:hunter2@127.0.0.1:1/litellm", "--store", str(store))
    assert report.code == 3
    line = report.line("database")
    assert line.startswith("FAIL")
    assert "cannot connect to the LiteLLM database postgresql://lab@127.0.0.1:1/litellm" in line
    assert "fix: start PostgreSQL, or correct --source (host, port, database, user, password)" in line
    assert "hunter2" not in report.text
    assert report.status("day files") == "OK"  # the store is still examined


def test_a_database_without_litellms_table(healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor) -> None:
    litellm, store = healthy
    wrong = litellm.url.rsplit("/", 1)[0] + "/postgres"
    report = run_doctor("--source", wrong, "--store", str(store))
    assert report.code == 3
    line = report.line("spend-log table")
    assert line.startswith("FAIL")
    assert "no table LiteLLM_SpendLogs in database postgres" in line
    assert "fix: wrong database? point --source at the one in LiteLLM's DATABASE_URL" in line
    # this store's bookmark is for the LiteLLM database, not for this one
    assert "this store belongs to another database" in report.line("state.json")


@pytest.fixture
def reader_role(litellm: LiteLLMDatabase) -> Iterator[str]:
    """A login role with no privilege on LiteLLM's tables (trust auth: no password)."""
    role = f"usage_test_reader_{uuid.uuid4().hex[:8]}"
    litellm.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)).as_string())
    yield role
    litellm.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(role)).as_string())
    litellm.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)).as_string())


def test_a_user_lacking_select_is_told_what_to_grant(
    healthy: tuple[LiteLLMDatabase, Path], reader_role: str, run_doctor: Doctor
) -> None:
    litellm, store = healthy
    litellm.execute(f'GRANT SELECT ON "LiteLLM_SpendLogs" TO {reader_role}')
    url = make_url(litellm.url).set(username=reader_role).render_as_string(hide_password=False)
    report = run_doctor("--source", url, "--store", str(store))
    assert report.code == 3
    line = report.line("privileges")
    assert line.startswith("FAIL")
    assert (
        f"user {reader_role} may not SELECT from LiteLLM_VerificationToken, LiteLLM_UserTable, "
        "LiteLLM_BudgetTable" in line
    )
    grant = f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader_role}"
    assert f"fix: as the owner of LiteLLM's tables, run: {grant}" in line
    assert "_prisma_migrations is not readable by this user" in report.line("schema")

    litellm.execute(grant)  # the fix, as printed
    report = run_doctor("--source", url, "--store", str(store))
    assert report.code == 0 and report.statuses() == {"OK"}, report.text


# --- the store -------------------------------------------------------------------------------


def read_day(store: Path, day: dt.date) -> pa.Table:
    return pq.ParquetFile(day_file(store, day)).read()


def write_day(store: Path, day: dt.date, table: pa.Table) -> None:
    pq.write_table(table.cast(REQUESTS_FILE_SCHEMA), day_file(store, day))


def test_a_duplicate_request_id_within_a_day_and_the_fix(
    healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor
) -> None:
    litellm, store = healthy
    day = read_day(store, DAY_ONE)
    write_day(store, DAY_ONE, pa.concat_tables([day, day.slice(0, 1)]))
    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 3
    line = report.line("request ids")
    assert line.startswith("FAIL")
    assert "1 request_id(s) stored more than once (1 extra copies, counted twice on the page)" in line
    assert f"in {DAY_ONE}; e.g. {day['request_id'][0].as_py()}" in line
    assert "fix: the ETL never writes these" in line and "`python -m etl run --full-refresh`" in line

    fill(litellm, store, full_refresh=True)  # the fix, as printed
    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 0 and report.status("request ids") == "OK", report.text


def test_a_request_stored_under_two_days(healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor) -> None:
    litellm, store = healthy
    first = read_day(store, DAY_ONE).slice(0, 1)
    write_day(store, DAY_TWO, pa.concat_tables([read_day(store, DAY_TWO), first]))
    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 3
    assert f"stored more than once (1 extra copies, counted twice on the page) in {DAY_ONE}, {DAY_TWO}" in (
        report.line("request ids")
    )


def test_a_corrupt_day_file_and_snapshot(healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor) -> None:
    litellm, store = healthy
    path = day_file(store, DAY_ONE)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])  # a torn copy
    (store / KEYS_FILE).write_bytes(b"not parquet at all")
    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 3
    line = report.line("day files")
    assert line.startswith("FAIL") and f"unreadable: {DAY_ONE} (" in line
    assert "fix: move each named requests/date=DAY/part-0.parquet out of" in line
    assert "then run `python -m etl run --full-refresh`" in line
    keys = report.line(KEYS_FILE)
    assert keys.startswith("FAIL") and "unreadable" in keys
    assert f"fix: delete {store / KEYS_FILE}: the next run writes it anew" in keys

    # the fixes, as printed
    path.rename(store.parent / "damaged.parquet")
    (store / KEYS_FILE).unlink()
    fill(litellm, store, full_refresh=True)
    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 0 and report.statuses() == {"OK"}, report.text
    assert DAY_ONE in stored_days(store)


def test_a_day_file_with_other_columns(healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor) -> None:
    litellm, store = healthy
    pq.write_table(read_day(store, DAY_TWO).drop_columns(["session_id"]), day_file(store, DAY_TWO))
    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 3
    line = report.line("day files")
    assert f"not the columns this version writes: {DAY_TWO}" in line and "--full-refresh --store" in line


def test_leftovers_of_a_killed_run(healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor) -> None:
    litellm, store = healthy
    tmp = day_file(store, DAY_ONE).with_name("part-0.parquet.tmp-0badc0de")
    tmp.write_bytes(b"half a file")
    (store / STAGING_DIR / "20261203T000000Z-0badc0de" / DAY_ONE.isoformat()).mkdir(parents=True)
    last = max(run["started_at"] for run in storeview.runs(store))
    pid = dead_pid()
    killed_at = last + dt.timedelta(minutes=5)
    (store / LOCK_FILE).write_text(f"pid {pid}, started {killed_at:%Y-%m-%d %H:%M:%S} UTC")
    before = files(store)

    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 0, report.text  # warnings only: the next run cleans up
    line = report.line("temporary files")
    assert line.startswith("WARN")
    assert f"left by a run that was killed: requests/date={DAY_ONE}/part-0.parquet.tmp-0badc0de" in line
    assert "fix: delete them" in line and "the next run also deletes them" in line
    line = report.line("staging")
    assert line.startswith("WARN") and ".staging/ (0.0 MB) left by a run that died" in line
    assert "fix: nothing to repair: the next run discards it" in line
    line = report.line("run lock")
    assert line.startswith("WARN")
    started = f"{killed_at:%Y-%m-%d %H:%M:%S} UTC"
    assert f"the run with pid {pid}, started {started}, ended without recording itself" in line
    assert "fix: nothing to repair, the next run repeats its work" in line
    assert files(store) == before

    fill(litellm, store)  # the next run
    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 0 and report.statuses() == {"OK"}, report.text


def test_a_running_runs_files_are_not_leftovers(
    healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor
) -> None:
    litellm, store = healthy
    day_file(store, DAY_ONE).with_name("part-0.parquet.tmp-0badc0de").write_bytes(b"being written")
    (store / STAGING_DIR).mkdir()
    with store_lock(store):  # the lock exactly as a run holds it
        report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 0 and report.statuses() == {"OK"}, report.text
    assert f"a run is in progress (pid {os.getpid()}, started" in report.line("run lock")
    assert "being written by the running run" in report.line("temporary files")
    assert "belongs to the running run" in report.line("staging")


def test_an_old_lock_file_of_a_finished_run_is_fine(
    healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor
) -> None:
    """The lock file stays after every run with the run's pid in it (the kernel drops the
    lock itself): a dead pid there alone is no problem."""
    litellm, store = healthy
    text = (store / LOCK_FILE).read_text()
    assert text.startswith("pid ")
    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.line("run lock").startswith("OK") and "has finished" in report.line("run lock")


def test_state_of_another_database(healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor) -> None:
    litellm, store = healthy
    then = dt.datetime(2026, 11, 21, 10, 0)
    write_state(store, State(source="db.other-lab:5432/litellm", cursor_column="created_at", cursor=then))
    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 3
    line = report.line(STATE_FILE)
    assert line.startswith("FAIL")
    assert "this store belongs to another database: its bookmark is for db.other-lab:5432/litellm" in line
    assert "fix: check --store and --source: give each LiteLLM database its own store" in line

    (store / STATE_FILE).write_text("{not json")
    report = run_doctor("--source", litellm.url, "--store", str(store))
    line = report.line(STATE_FILE)
    assert report.code == 3 and line.startswith("FAIL") and "is unreadable" in line
    assert f"fix: move {store / STATE_FILE} away and run again" in line


def test_a_corrupt_run_history_and_a_failed_last_run(
    healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor
) -> None:
    litellm, store = healthy
    config = load_config(None, source="postgresql://lab@127.0.0.1:1/litellm", store=store, env={})
    with pytest.raises(SourceUnreachable):
        run_etl(config)
    report = run_doctor("--source", litellm.url, "--store", str(store))
    assert report.code == 0, report.text
    line = report.line("last run")
    assert line.startswith("WARN") and "failed: cannot connect to the LiteLLM database" in line
    assert "fix: fix what the error names" in line

    (store / RUNS_FILE).write_bytes(b"PAR1 torn")
    report = run_doctor("--source", litellm.url, "--store", str(store))
    line = report.line(RUNS_FILE)
    assert report.code == 3 and line.startswith("FAIL") and "unreadable" in line
    assert f"fix: move {store / RUNS_FILE} away" in line


def test_a_store_not_updated_for_a_while(healthy: tuple[LiteLLMDatabase, Path]) -> None:
    litellm, store = healthy
    later = dt.datetime.now(dt.UTC) + dt.timedelta(hours=3)
    checks = doctor.diagnose(source=litellm.url, store=store, env={}, now=later)
    last = next(c for c in checks if c.name == "last run")
    assert last.status == "WARN" and "the dashboard calls data older than 30 minutes stale" in last.detail
    assert last.fix is not None and "is the cron job running?" in last.fix
    assert doctor.exit_code(checks) == 0


def test_a_store_that_does_not_exist_is_not_created(
    litellm: LiteLLMDatabase, tmp_path: Path, run_doctor: Doctor
) -> None:
    report = run_doctor("--source", litellm.url, "--store", str(tmp_path / "new" / "store"))
    assert report.code == 0
    line = report.line("store directory")
    assert line.startswith("WARN") and "does not exist yet (it can be created)" in line
    assert "fix: run `python -m etl run` once" in line
    assert not (tmp_path / "new").exists()

    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    report = run_doctor("--source", litellm.url, "--store", str(blocker / "store"))
    line = report.line("store directory")
    assert report.code == 3 and line.startswith("FAIL")
    assert f"cannot be created: {blocker} is a file" in line and "fix: choose another --store" in line


# --- the configuration ------------------------------------------------------------------------


def test_an_invalid_configuration_file(
    healthy: tuple[LiteLLMDatabase, Path], tmp_path: Path, run_doctor: Doctor
) -> None:
    litellm, store = healthy
    config = tmp_path / "usage.toml"
    config.write_text(f'store = "{store}"\n[dashboard]\ncolour = "teal"\n', encoding="utf-8")
    report = run_doctor("--source", litellm.url, "--config", str(config))
    assert report.code == 3
    line = report.line("configuration")
    assert line.startswith("FAIL") and "unknown setting dashboard.colour in the configuration file" in line
    assert "fix: correct the setting named" in line
    # the rest is still checked, on the store the file names
    assert report.status("database") == "OK" and report.status("request ids") == "OK"
    assert str(store) in report.line("store directory")

    config.write_text('[dashboard]\ntimezone = "Mars/Olympus_Mons"\n', encoding="utf-8")
    report = run_doctor("--source", litellm.url, "--store", str(store), "--config", str(config))
    assert report.code == 3 and "'Mars/Olympus_Mons' is not an IANA time zone" in report.line("configuration")

    report = run_doctor("--source", litellm.url, "--store", str(store), "--config", str(tmp_path / "no.toml"))
    line = report.line("configuration")
    assert report.code == 3 and "does not exist" in line
    assert "fix: pass --config with the right path, or unset USAGE_CONFIG" in line


def test_no_source_configured(healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor) -> None:
    _, store = healthy
    report = run_doctor("--store", str(store))
    assert report.code == 3
    line = report.line("source")
    assert line.startswith("FAIL") and "no LiteLLM database configured" in line
    assert "fix: pass --source postgresql://user:password@host:5432/litellm or set LITELLM_DATABASE_URL" in (
        line
    )

    report = run_doctor("--source", "mysql://root@localhost/litellm", "--store", str(store))
    assert report.code == 3 and "must be a PostgreSQL URL" in report.line("source")


# --- help -------------------------------------------------------------------------------


def test_help_explains_doctor_and_its_exit_codes() -> None:
    top = cli("--help", env={})
    assert top.returncode == 0
    assert "doctor" in top.stdout and "LITELLM_DATABASE_URL" in top.stdout and "USAGE_STORE" in top.stdout
    assert "doctor exits 0 when nothing must be fixed and 3" in " ".join(top.stdout.split())
    help_text = cli("doctor", "--help", env={})
    assert help_text.returncode == 0
    text = " ".join(help_text.stdout.split())
    for words in ("--source", "--store", "--config", "never writes", "3 at least one FAIL line", "SELECT"):
        assert words in text, words


def test_report_lines() -> None:
    checks = [
        doctor.ok("store directory", "/srv/usage exists"),
        doctor.warn("staging", ".staging/ left", "the next run discards it"),
    ]
    assert doctor.report(checks) == [
        "OK    store directory   /srv/usage exists",
        "WARN  staging           .staging/ left -> fix: the next run discards it",
        "doctor: 1 OK, 1 WARN, 0 FAIL: nothing must be fixed; the WARN lines are worth a look",
    ]
    assert doctor.exit_code(checks) == 0
    assert doctor.exit_code([*checks, doctor.fail("source", "none", "set one")]) == 3


def test_a_demo_store_given_as_the_real_one(
    healthy: tuple[LiteLLMDatabase, Path], run_doctor: Doctor
) -> None:
    """The simulated lab's store named where the real one belongs: runs would be refused."""
    litellm, _ = healthy
    demo_store = healthy[1].parent / "demo"
    demo.build(demo_store, days=0.2)
    report = run_doctor("--source", litellm.url, "--store", str(demo_store))
    assert report.code == 3
    line = report.line("demo store")
    assert line.startswith("FAIL") and "is a demo store (simulated data" in line
    assert "fix: give the real store its own directory" in line
    assert run_doctor("--source", litellm.url, "--store", str(healthy[1])).line("demo store").startswith("OK")


def test_days_without_a_current_rollup_are_a_warning_that_the_next_run_mends(tmp_path: Path) -> None:
    from contract.store import day_file, stored_days
    from etl import doctor, rollup
    from etl.load import write_day
    from tests import known_store

    store = known_store.build(tmp_path / "store")
    assert doctor.check_rollups(store, "Asia/Seoul").status == "OK"
    day = stored_days(store)[0]
    write_day(store, day, pq.read_table(day_file(store, day)))  # rewritten: its rollup is stale
    check = doctor.check_rollups(store, "Asia/Seoul")
    assert check.status == "WARN" and str(day) in check.detail and "1 of 3 days" in check.detail
    rollup.ensure(store, "Asia/Seoul")
    assert doctor.check_rollups(store, "Asia/Seoul").status == "OK"


def test_a_day_file_the_etl_set_aside_is_reported_with_what_to_do(tmp_path: Path) -> None:
    from etl.doctor import check_set_aside

    store = tmp_path / "store"
    (store / "requests" / "date=2026-11-20").mkdir(parents=True)
    assert check_set_aside(store).status == "OK"
    aside = store / "requests" / "date=2026-11-20" / "part-0.parquet.damaged-20261205T063451Z"
    aside.write_bytes(b"unreadable")
    check = check_set_aside(store)
    assert check.status == "WARN" and aside.name in check.detail and "--full-refresh" in (check.fix or "")
