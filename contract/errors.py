"""The store's own error: a file of the contract that cannot be read."""

from __future__ import annotations

from settings.errors import UsageError


class StoreCorrupt(UsageError):
    """A store file the ETL must read (state.json) cannot be read."""

    exit_code = 65
