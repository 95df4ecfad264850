"""`python -m etl`: the command line of the ETL."""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from etl import health
from etl.config import load_config
from etl.errors import EtlError, RunInProgress, StoreNotWritable
from etl.run import run_etl

log = logging.getLogger("etl")

EXIT_CODES = """\
exit codes:
  0   the run finished; the store is up to date with the source
  1   unexpected error (a bug: please report it with the message)
  2   bad command line or configuration file
  65  a store file is unreadable or from another version; the message says what to do
  66  the database has no LiteLLM_SpendLogs table (wrong database?)
  69  the database cannot be reached
  73  the store directory cannot be created or written
  77  the database refused a read (the user lacks SELECT on LiteLLM's tables)
  75  another run is writing the same store; this one did nothing
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m etl",
        description="Copy LiteLLM's spend logs into the Parquet store the dashboard reads.",
        epilog=EXIT_CODES,
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
        "time, duration, rows, noise dropped by reason, failures) to PATH atomically, e.g. into "
        "node_exporter's textfile collector directory as llm_usage_etl.prom",
    )
    run.add_argument("--quiet", action="store_true", help="print nothing but warnings and errors")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(format="etl: %(levelname)s: %(message)s", level=logging.INFO, stream=sys.stderr)
    try:
        if args.command == "run":
            return _run(args)
    except EtlError as exc:
        log.error("%s", exc)
        return exc.exit_code
    except KeyboardInterrupt:
        log.error("interrupted; the store is unchanged or complete, and the next run resumes")
        return 130
    return 2


def _run(args: argparse.Namespace) -> int:
    started = time.monotonic()
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
            _write_metrics(args.metrics_file, failed, config.store if config else None)
        raise
    if summary.note and not args.quiet:
        log.info("%s", summary.note)
    if not args.quiet:
        print(summary.line(), flush=True)
    if args.metrics_file:
        done = health.Attempt(
            dt.datetime.now(dt.UTC),
            ok=True,
            seconds=summary.seconds,
            rows_read=summary.rows_read,
            rows_written=summary.rows_written,
            dropped=summary.dropped,
        )
        if not _write_metrics(args.metrics_file, done, config.store):
            return StoreNotWritable.exit_code
    return 0


def _write_metrics(path: str, attempt: health.Attempt, store: Path | None) -> bool:
    try:
        health.write(Path(path), attempt, store)
    except OSError as exc:
        log.error("could not write the metrics file %s: %s", path, exc.strerror or exc)
        return False
    return True
