"""Durable, atomic file writes: a reader sees the old file or the new one, never a part."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from etl.store import TMP_MARK

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


def remove_leftovers(store: Path) -> int:
    """Delete temporary files a killed run left behind; returns how many."""
    removed = 0
    for path in store.rglob(f"*{TMP_MARK}*"):
        if path.is_file():
            path.unlink(missing_ok=True)
            removed += 1
    return removed
