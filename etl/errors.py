"""The few errors the ETL reports, each with its exit code and a message that says what to do."""

from __future__ import annotations

from settings.errors import UsageError


class EtlError(UsageError):
    """An error of the ETL's own (the source, the store's directory, the lock). The
    configuration's (`settings.errors.ConfigError`) and the store's
    (`contract.errors.StoreCorrupt`) are defined where they are raised."""


class SourceDataError(EtlError):
    """The spend-log table has a column of a type, or a value, the ETL cannot read."""

    exit_code = 65


class SourceTableMissing(EtlError):
    """The database has no LiteLLM spend-log table: probably the wrong database."""

    exit_code = 66


class SourceUnreachable(EtlError):
    """The LiteLLM database could not be reached."""

    exit_code = 69


class StoreNotWritable(EtlError):
    """The store directory cannot be created or written."""

    exit_code = 73


class SourceRefused(EtlError):
    """The database refused a query: the user lacks a privilege, or a timeout hit."""

    exit_code = 77


class RunInProgress(EtlError):
    """Another ETL run holds the store's lock; this run did nothing."""

    exit_code = 75
