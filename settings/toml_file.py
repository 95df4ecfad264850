"""Reading a TOML file a person names (the configuration, the price book): only a small
regular file is opened, and whatever is wrong with it is one ConfigError, never a traceback
or a wait (a pipe or a device given by mistake would block or never end)."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from settings.errors import ConfigError

MAX_BYTES = 1_000_000  # either file is a few KB; a larger one is not what was meant
MAX_DEPTH = 16  # tables and arrays within one another; the deepest setting has 4


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """The TOML document at `path`; `what` names the file in errors ("configuration file
    usage.toml", "price book prices.toml")."""
    try:
        info = path.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{what} is {kind_of(info.st_mode)}: give the path of a TOML file")
        # O_NONBLOCK: a file swapped for a pipe after the stat must not block the open
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ConfigError(f"{what} is not a regular file: give the path of a TOML file")
            data = os.read(fd, MAX_BYTES + 1)
        finally:
            os.close(fd)
    except FileNotFoundError:
        raise ConfigError(f"{what} does not exist") from None
    except OSError as exc:
        raise ConfigError(f"{what} cannot be read: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise ConfigError(f"{what} is larger than {MAX_BYTES:,} bytes: is it the right file?")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{what} is not UTF-8 text (byte {exc.start + 1} is not): save it as UTF-8"
        ) from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{what} is not valid TOML: {exc}") from None
    except RecursionError:
        document = None
    if document is None or _depth(document) > MAX_DEPTH:
        raise ConfigError(f"{what} nests tables or arrays more than {MAX_DEPTH} levels deep")
    return document


def _depth(value: Any) -> int:
    """How deep tables and arrays nest in `value`, counted without recursion (a document
    of dotted keys can nest thousands of levels, which any recursive walk would not survive)."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            break
        pending.extend((child, depth + 1) for child in children)
    return deepest


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, for a message ("... is a pipe")."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"
