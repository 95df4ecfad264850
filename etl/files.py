"""Durable, atomic file writes: a reader sees the old file or the new one, never a part."""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contract.store import (
    DAY_FILE,
    KEYS_FILE,
    REQUESTS_DIR,
    ROLLUPS_DIR,
    RUNS_FILE,
    STATE_FILE,
    TMP_MARK,
    USERS_FILE,
)

PARQUET_OPTIONS = {"compression": "zstd", "write_statistics": True}


def tmp_path(final: Path) -> Path:
    # <name>.tmp-<random>: never matches *.parquet, so readers' globs skip it
    return final.with_name(f"{final.name}{TMP_MARK}{secrets.token_hex(4)}")


def atomic_replace(final: Path, write: Callable[[Path], object]) -> None:
    """Call `write(tmp)`, make the file durable, then rename it over `final`."""
    make_dirs(final.parent)
    tmp = tmp_path(final)
    try:
        write(tmp)
        _fsync_file(tmp)
        tmp.replace(final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(final.parent)


def atomic_write_bytes(final: Path, data: bytes) -> None:
    atomic_replace(final, lambda tmp: tmp.write_bytes(data))


def atomic_write_table(final: Path, table: pa.Table) -> None:
    atomic_replace(final, lambda tmp: pq.write_table(table, tmp, **PARQUET_OPTIONS))


def make_dirs(path: Path) -> None:
    """mkdir -p, with every new directory's entry made durable in its parent: a day
    directory must survive a power cut as surely as the bookmark that counts on it."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(exist_ok=True)
        fsync_dir(folder.parent)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# What `tmp_path` names, and where the ETL writes atomically: --store may be pointed at a
# directory that is not a store, so nothing else there is ever the ETL's to delete.
_TMP_NAME = re.compile(rf"(?P<final>.+){re.escape(TMP_MARK)}[0-9a-f]{{8}}")
_DAY_FOLDER = re.compile(r"date=\d{4}-\d{2}-\d{2}")
_ROOT_FILES = frozenset({STATE_FILE, KEYS_FILE, USERS_FILE, RUNS_FILE})


def remove_leftovers(store: Path) -> int:
    """Delete the temporary files a killed run left behind; returns how many."""
    removed = 0
    for path in _own_temporary_files(store):
        path.unlink(missing_ok=True)
        removed += 1
    return removed


def _own_temporary_files(store: Path) -> Iterator[Path]:
    yield from _temporary(store, lambda final: final in _ROOT_FILES)
    for folder, final_name in ((REQUESTS_DIR, lambda final: final == DAY_FILE), (ROLLUPS_DIR, _is_parquet)):
        parent = store / folder
        if not parent.is_dir() or parent.is_symlink():
            continue
        for day in parent.iterdir():
            if _DAY_FOLDER.fullmatch(day.name) and day.is_dir() and not day.is_symlink():
                yield from _temporary(day, final_name)


def _temporary(folder: Path, final_name: Callable[[str], bool]) -> Iterator[Path]:
    for path in folder.iterdir():
        match = _TMP_NAME.fullmatch(path.name)
        if match and final_name(match["final"]) and path.is_file() and not path.is_symlink():
            yield path


def _is_parquet(name: str) -> bool:
    return name.endswith(".parquet")
