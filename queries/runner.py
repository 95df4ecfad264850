"""Run the named SQL files of this folder with DuckDB over the store; DataFrames out.

`run("store_status", store)` reads `store_status.sql`. Every query sees the store as
views: `requests` (Hive-partitioned by UTC `date`), `etl_runs`, `keys`, `users`; a file
that does not exist yet reads as an empty view of the right columns. Parameters are
always bound, never formatted into the SQL.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from etl.store import (
    DAY_FILE,
    KEYS_FILE,
    KEYS_SCHEMA,
    REQUESTS_SCHEMA,
    RUNS_FILE,
    RUNS_SCHEMA,
    USERS_FILE,
    USERS_SCHEMA,
    requests_dir,
)

QUERY_DIR = Path(__file__).parent
_SNAPSHOTS: tuple[tuple[str, str, pa.Schema], ...] = (
    ("etl_runs", RUNS_FILE, RUNS_SCHEMA),
    ("keys", KEYS_FILE, KEYS_SCHEMA),
    ("users", USERS_FILE, USERS_SCHEMA),
)


class UnknownQuery(LookupError):
    pass


def query_names() -> list[str]:
    return sorted(p.stem for p in QUERY_DIR.glob("*.sql"))


@cache
def load_sql(name: str) -> str:
    path = QUERY_DIR / f"{name}.sql"
    if not path.is_file():
        raise UnknownQuery(f"no query {name!r}; known: {', '.join(query_names())}")
    return path.read_text(encoding="utf-8")


def connect(store: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB whose views show the store as it is now.

    The file list is taken once, here: the ETL only ever replaces whole files by atomic
    rename, so every file this connection opens is complete.
    """
    con = duckdb.connect()
    files = [str(p) for p in sorted(requests_dir(store).glob(f"date=*/{DAY_FILE}"))]
    if files:
        con.execute("SET VARIABLE requests_files = $files", {"files": files})
        con.execute(
            "CREATE VIEW requests AS FROM read_parquet(getvariable('requests_files'), "
            "hive_partitioning = true, hive_types = {'date': DATE})"
        )
    else:
        con.register("requests", REQUESTS_SCHEMA.empty_table())
    for view, file, schema in _SNAPSHOTS:
        path = store / file
        if path.is_file():
            con.execute(f"SET VARIABLE {view}_file = $file", {"file": str(path)})
            con.execute(f"CREATE VIEW {view} AS FROM read_parquet(getvariable('{view}_file'))")
        else:
            con.register(view, schema.empty_table())
    return con


def run(name: str, store: Path, **params: Any) -> pd.DataFrame:
    """The result set of `<name>.sql` over `store`, with `params` bound by name."""
    sql = load_sql(name)
    with connect(store) as con:
        return con.execute(sql, params or None).df()
