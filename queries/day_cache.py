"""The requests of recently read days, kept in memory up to a size: what single-request
queries (percentiles, requests over time, the Nodes page) scan instead of decoding the
same Parquet files on every page.

A day is cached under its file's size and modification time, so a day the ETL rewrote is
read again and the old copy ages out; days beyond the budget are read from their files
by DuckDB, streaming, so a query over a year never holds a year of requests in memory.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contract.store import REQUESTS_FILE_SCHEMA
from queries.shared import Shared

DEFAULT_MB = 256
# Never read by a query, and the bulk of a day's bytes: left on disk.
LEFT_OUT = ("request_id", "session_id", "request_tags")
COLUMNS = [name for name in REQUESTS_FILE_SCHEMA.names if name not in LEFT_OUT]
SCHEMA = pa.schema([REQUESTS_FILE_SCHEMA.field(c) for c in COLUMNS])
# Few distinct values each: dictionary-encoded, a day takes a third of the memory.
DICTIONARY = (
    "api_key_hash", "key_alias", "user_id", "team_id", "end_user", "user", "model", "model_group",
    "model_id", "provider", "api_base", "node", "user_agent", "client", "call_type", "status", "error_class",
)  # fmt: skip
Key = tuple[str, int, int]  # path, size, mtime_ns


class DayCache:
    def __init__(self, max_mb: int = DEFAULT_MB) -> None:
        self.max_bytes = max_mb * 2**20
        self._days: Shared[pa.Table] = Shared(
            max_entries=100_000, max_size=self.max_bytes, size=lambda table: int(table.nbytes)
        )

    def split(self, days: Iterable[tuple[dt.date, Path]]) -> tuple[list[pa.Table], list[Path]]:
        """The requests of `days` (newest first) as cached tables, as many as half the
        budget holds (read now if need be); the files of the others, to read from disk."""
        tables: list[pa.Table] = []
        files: list[Path] = []
        taken = 0
        for _, path in sorted(days, reverse=True):
            if taken > self.max_bytes // 2:
                files.append(path)
                continue
            table = self.get(path)
            if table is None:
                files.append(path)  # replaced or gone meanwhile: DuckDB reads what is there
                continue
            taken += table.nbytes
            tables.append(table)
        return tables, files

    def get(self, path: Path) -> pa.Table | None:
        try:
            stat = path.stat()
        except FileNotFoundError:
            return None
        key: Key = (str(path), stat.st_size, stat.st_mtime_ns)
        return self._days.get(key, lambda: _read(path))


def _read(path: Path) -> pa.Table:
    """The day's COLUMNS, through one open handle (the ETL may rename a new file over it);
    a column an older store did not write reads as NULL."""
    with path.open("rb") as handle:
        present = set(pq.ParquetFile(handle).schema_arrow.names)
        handle.seek(0)
        wanted = [c for c in COLUMNS if c in present]
        dictionaries = [c for c in DICTIONARY if c in present]
        table = pq.ParquetFile(handle, read_dictionary=dictionaries).read(columns=wanted)
    arrays = [table[c] if c in present else pa.nulls(table.num_rows, SCHEMA.field(c).type) for c in COLUMNS]
    return pa.table(arrays, names=COLUMNS)
