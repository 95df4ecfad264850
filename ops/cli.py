"""`python -m etl`: the command line of the ETL."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from contract.errors import StoreCorrupt
from contract.statements import NotAMonth
from contract.store import KEYS_FILE, USERS_FILE
from etl import health, rollup
from etl.errors import RunInProgress, StoreNotWritable
from etl.run import rebuild_rollups, run_etl
from settings.config import Config, load_config
from settings.errors import ConfigError, UsageError

log = logging.getLogger("etl")

EXIT_CODES = """\
exit codes:
  0   the run finished; the store is up to date with the source
  1   unexpected error (a bug: please report it with the message)
  2   bad command line or configuration file
  65  a store file is unreadable or from another version, or the LiteLLM table has a
      column type or a value the ETL cannot read; the message says what to do
  66  the database has no LiteLLM_SpendLogs table (wrong database?)
  69  the database cannot be reached
  73  the store directory cannot be created or written
  77  the database refused a read (the user lacks SELECT on LiteLLM's tables)
  75  another run is writing the same store; this one did nothing
"""


DESCRIPTION = """\
The ETL of the LiteLLM usage dashboard: it copies LiteLLM's spend logs (the
"LiteLLM_SpendLogs" table in LiteLLM's PostgreSQL) into the Parquet store the dashboard
reads, once per request and without LiteLLM's own noise. It only reads LiteLLM's
database, and it is the only program that writes the store.

Every command takes the same three settings: --source (default: env
LITELLM_DATABASE_URL, then DATABASE_URL), --store (env USAGE_STORE, then the
configuration file's store, then ./data) and --config (env USAGE_CONFIG; optional)."""

TOP_EPILOG = f"""\
examples:
  python -m etl run                  # copy what is new (cron: settings from the environment)
  python -m etl run --full-refresh   # re-read everything, e.g. after naming the GPU nodes
  python -m etl doctor               # after setting up, or when runs fail: what to fix
  python -m etl rollup               # rebuild the rollups from the day files (runs do it too)
  python -m etl COMMAND --help       # a command's options

{EXIT_CODES.replace("exit codes:", "exit codes of run:", 1)}
doctor exits 0 when nothing must be fixed and 3 when something must (see doctor --help).
More in README.md ("Keeping the store up to date") and docs/store.md (the store's layout).
"""

DOCTOR_DESCRIPTION = """\
Check an installation and say what to fix, one line per check (OK, WARN or FAIL, and
for anything not OK what to do). It reads, never writes: not the store (it does not
even create the store directory), not the database.

  configuration  the TOML file is valid, its time zone known, a source configured
  database       reachable; the LiteLLM_SpendLogs table is there; LiteLLM's newest
                 migration and optional columns, hence the cursor a run will use;
                 SELECT on the four tables a run reads
  store          the directory exists or can be created, and is writable; every day
                 file is readable Parquet with this version's columns; no request_id
                 stored twice; every day file has its rollup; no temporary files
                 or .staging/ left by a killed run;
                 the run lock; state.json valid and for the configured database;
                 keys.parquet, users.parquet and etl_runs.parquet readable; the last
                 run succeeded, recently"""

DOCTOR_EPILOG = """\
exit codes:
  0   nothing must be fixed (WARN lines are worth a look but need no action to run)
  2   bad command line
  3   at least one FAIL line: fix what it says, then run doctor again
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m etl",
        description=DESCRIPTION,
        epilog=TOP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser(
        "run",
        help="copy new spend-log rows into the store (run it from cron every few minutes)",
        description=(
            "Copy every LiteLLM request not yet in the store, exactly once, dropping\n"
            "LiteLLM's own noise (master-key calls, health checks). Safe to interrupt and\n"
            "to re-run: a run that dies leaves the store as it was or complete."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "--source",
        metavar="URL",
        help="LiteLLM's PostgreSQL database as a SQLAlchemy URL, e.g. "
        "postgresql://user:password@host:5432/litellm "
        "(default: env LITELLM_DATABASE_URL, then DATABASE_URL)",
    )
    run.add_argument(
        "--store", metavar="DIR", help="the store directory (default: env USAGE_STORE, then ./data)"
    )
    run.add_argument("--config", metavar="FILE", help="TOML configuration file (default: env USAGE_CONFIG)")
    run.add_argument(
        "--full-refresh",
        action="store_true",
        help="re-read the whole source with the current configuration and rewrite the rows it "
        "still has; rows LiteLLM has since deleted stay in the store",
    )
    run.add_argument(
        "--metrics-file",
        metavar="PATH",
        help="after the run, good or failed, write Prometheus text-format metrics (last success "
        "time, duration, rows, noise dropped by reason, failures; each budget's share used and "
        "forecast run-out, from the store's key list) to PATH atomically, e.g. into "
        "node_exporter's textfile collector directory as llm_usage_etl.prom; PATH must be in an "
        "existing folder and be a regular file or nothing yet",
    )
    run.add_argument("--quiet", action="store_true", help="print nothing but warnings and errors")
    _add_doctor(commands)
    _add_statements(commands)
    rollups = commands.add_parser(
        "rollup",
        help="build the rollups the store lacks from its day files (every run does this by itself)",
        description=(
            "Build the rollups (each day's requests summed per group, what pages over long\n"
            "ranges read) that the store lacks: after an upgrade, or a run killed between a\n"
            "day file and its rollup. Every run does this by itself first, so this is never\n"
            "needed; it shows progress and can be interrupted and run again at any point.\n"
            "It reads no database."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    rollups.add_argument(
        "--store", metavar="DIR", help="the store directory (default: env USAGE_STORE, then ./data)"
    )
    rollups.add_argument(
        "--config", metavar="FILE", help="TOML configuration file (default: env USAGE_CONFIG)"
    )
    rollups.add_argument("--all", action="store_true", help="rebuild every rollup, not only the missing ones")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(format="etl: %(levelname)s: %(message)s", level=logging.INFO, stream=sys.stderr)
    commands = {
        "run": _run,
        "doctor": _doctor,
        "rollup": _rollup,
        "close-month": _close_month,
        "reopen-month": _reopen_month,
    }
    try:
        if args.command in commands:
            return commands[args.command](args)
    except UsageError as exc:
        log.error("%s", exc)
        return exc.exit_code
    except KeyboardInterrupt:
        log.error("interrupted; the store is unchanged or complete, and the next run resumes")
        return 130
    return 2


def _run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    if args.metrics_file:
        health.check_path(Path(args.metrics_file))  # a bad path is a bad command line: nothing is run
    config = None
    try:
        config = load_config(args.config, source=args.source, store=args.store)
        show_progress = not args.quiet and sys.stderr.isatty()
        summary = run_etl(
            config,
            full_refresh=args.full_refresh,
            progress=(lambda text: print(text, file=sys.stderr, flush=True)) if show_progress else None,
        )
    except RunInProgress:
        raise  # the run holding the lock reports for both
    except BaseException:
        if args.metrics_file:
            failed = health.Attempt(dt.datetime.now(dt.UTC), ok=False, seconds=time.monotonic() - started)
            _write_metrics(args.metrics_file, failed, config)
        raise
    if summary.note and not args.quiet:
        log.info("%s", summary.note)
    if not args.quiet:
        print(summary.line(), flush=True)
    _close_due(config)
    if args.metrics_file:
        done = health.Attempt(
            dt.datetime.now(dt.UTC),
            ok=True,
            seconds=summary.seconds,
            rows_read=summary.rows_read,
            rows_written=summary.rows_written,
            dropped=summary.dropped,
        )
        if not _write_metrics(args.metrics_file, done, config):
            return StoreNotWritable.exit_code
    return 0


def _close_due(config: Config) -> None:
    """After a good run, the months `[statements] close_after_days` says are due; a failure
    here is logged and never fails the run (the copy itself is done)."""
    if config.statements.close_after_days is None:
        return
    from ops import statements  # noqa: PLC0415  DuckDB's reader loads only for statements

    try:
        for closed in statements.close_due(config, dt.datetime.now(dt.UTC)):
            log.info("closed %s by itself (%s requests)", closed.name, f"{closed.totals['requests']:,}")
    except Exception as exc:  # the run's data is safe; the month is closed by a later run or by hand
        log.error("could not close the month due: %s", exc)


def _rollup(args: argparse.Namespace) -> int:
    config = load_config(args.config, source=None, store=args.store)
    began = time.monotonic()
    zone = config.dashboard.timezone
    built = rebuild_rollups(
        config.store,
        zone,
        everything=args.all,
        progress=(lambda text: print(text, file=sys.stderr, flush=True)) if sys.stderr.isatty() else None,
    )
    left = rollup.missing(config.store, zone)
    print(f"rollups: {built:,} built in {time.monotonic() - began:.1f} s; {len(left):,} days without one")
    if left:
        log.error("the day files of %s could not be read (see above): run python -m etl doctor", left[0])
        return StoreCorrupt.exit_code
    return 0


def _write_metrics(path: str, attempt: health.Attempt, config: Config | None) -> bool:
    """`config` None: the configuration could not even say where the store is."""
    store = config.store if config else None
    budgets = budgets_in(store, config.dashboard.timezone) if config and store else None
    try:
        health.write(Path(path), attempt, store, budgets)
    except ConfigError as exc:
        log.error("%s", exc)
        return False
    except OSError as exc:
        log.error("could not write the metrics file %s: %s", path, exc.strerror or exc)
        return False
    return True


def budgets_in(store: Path, zone: str) -> list[health.Budget] | None:
    """The store's budgets and their forecast, from the query the Budgets page shows
    (queries/budgets.sql): one definition of a forecast, read from the store as the
    dashboard reads it. Here, not in etl/health.py, because only the metrics file needs
    DuckDB's reader, and the health metrics must come out whatever becomes of it. None
    (reported as skipped) when the store has no key list yet or cannot be read."""
    try:
        from queries import pages  # noqa: PLC0415  DuckDB's reader loads only for --metrics-file
        from queries.runner import StoreReader  # noqa: PLC0415  likewise

        if not (store / KEYS_FILE).is_file():
            log.warning("no budget metrics: the store has no copy of LiteLLM's key list yet")
            return None
        reader = StoreReader(store, zone=zone, share_results=False)
        frame = pages.budgets(reader)
        unread = {file: why for file, why in reader.damaged().items() if file in (KEYS_FILE, USERS_FILE)}
        if unread:  # the reader goes on without them: here that would be no budgets at all
            log.warning(
                "no budget metrics: %s", "; ".join(f"{f} unreadable ({w})" for f, w in unread.items())
            )
            return None
        rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
        return health.budgets_of(cast("list[dict[str, Any]]", rows))
    except Exception as exc:  # any failure here costs the budget series, never the run's health
        log.warning("no budget metrics: the budgets of %s could not be computed: %s", store, exc)
        return None


def _add_doctor(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "doctor",
        help="check the configuration, the database and the store, and say what to fix (read-only)",
        description=DOCTOR_DESCRIPTION,
        epilog=DOCTOR_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--source",
        metavar="URL",
        help="LiteLLM's PostgreSQL database, as for run "
        "(default: env LITELLM_DATABASE_URL, then DATABASE_URL); the password is never printed",
    )
    parser.add_argument(
        "--store",
        metavar="DIR",
        help="the store directory (default: env USAGE_STORE, then the configuration file's store, "
        "then ./data)",
    )
    parser.add_argument(
        "--config", metavar="FILE", help="TOML configuration file (default: env USAGE_CONFIG)"
    )


def _doctor(args: argparse.Namespace) -> int:
    from etl import doctor  # noqa: PLC0415  it imports everything: not for every cron run

    checks = doctor.diagnose(config_file=args.config, source=args.source, store=args.store)
    for line in doctor.report(checks):
        print(line, flush=True)
    return doctor.exit_code(checks)


def _add_statements(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    close = commands.add_parser(
        "close-month",
        help="write a month's statement into the store, once: it never changes after",
        description=(
            "Close MONTH (YYYY-MM, in the lab's time zone): its statement (per person, key and\n"
            "client: requests, tokens by kind, spend, the cost at API prices) is written into\n"
            "the store with checksums and never changes after; requests of earlier closed\n"
            "months that arrived since they were closed are listed as adjustments. Refused\n"
            "for the current or a future month and for a closed one."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    reopen = commands.add_parser(
        "reopen-month",
        help="set a closed month's statement aside (kept, with the reason) so it can be closed anew",
    )
    reopen.add_argument("--reason", required=True, help="why it is reopened (kept beside the statement)")
    for parser in (close, reopen):
        parser.add_argument("month", metavar="MONTH", help="the month, YYYY-MM")
        parser.add_argument(
            "--store", metavar="DIR", help="the store directory (default: env USAGE_STORE, then ./data)"
        )
        parser.add_argument(
            "--config", metavar="FILE", help="TOML configuration file (default: env USAGE_CONFIG)"
        )


def _close_month(args: argparse.Namespace) -> int:
    from ops import statements  # noqa: PLC0415  DuckDB's reader loads only for statements

    config = load_config(args.config, source=None, store=args.store)
    try:
        closed = statements.close_month(config, args.month)
    except NotAMonth as exc:
        raise ConfigError(str(exc)) from None
    totals = closed.totals
    print(
        f"closed {closed.name}: {totals['requests']:,} requests, "
        f"spend ${totals['spend_usd']:,.2f}, {len(closed.lines):,} lines "
        f"({closed.adjustments['requests']:,} late requests of earlier months as adjustments); "
        f"{closed.folder}"
    )
    return 0


def _reopen_month(args: argparse.Namespace) -> int:
    from ops import statements  # noqa: PLC0415  likewise

    config = load_config(args.config, source=None, store=args.store)
    try:
        aside = statements.reopen_month(config, args.month, args.reason)
    except NotAMonth as exc:
        raise ConfigError(str(exc)) from None
    print(f"reopened {args.month}: its statement is kept as {aside}; close it again with close-month")
    return 0
