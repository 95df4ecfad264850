"""The errors a person can act on, each with the exit code `python -m etl` exits with."""

from __future__ import annotations


class UsageError(Exception):
    """An error a person can act on; `exit_code` is what `python -m etl` exits with."""

    exit_code = 1


class ConfigError(UsageError):
    """Bad command line or configuration file."""

    exit_code = 2
