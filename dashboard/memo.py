"""Figures shared by every session. A figure builder is pure: the same data, highlight
and language give the same figure, and building one with Plotly costs more than all of a
page's queries together. So each figure is built once and handed to every session that
shows it; `st.plotly_chart` only reads it (it serialises a copy)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar

import pandas as pd

from dashboard.strings import current_language
from queries.shared import Shared

P = ParamSpec("P")
R = TypeVar("R")

_FIGURES: Shared[Any] = Shared(max_entries=600)


class Unhashable(TypeError):
    pass


def shared(builder: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(builder)
    def built(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            key = (builder.__qualname__, current_language(), fingerprint(args), fingerprint(kwargs))
        except Unhashable:
            return builder(*args, **kwargs)
        result: R = _FIGURES.get(key, lambda: builder(*args, **kwargs))
        return result

    return built


def fingerprint(value: Any) -> Hashable:
    """A hashable stand-in for a builder's argument: a frame by its columns, types and
    a digest of its values."""
    if isinstance(value, pd.DataFrame | pd.Series):
        try:
            digest = pd.util.hash_pandas_object(value, index=True).to_numpy().tobytes()
        except TypeError as exc:  # a column of lists, say
            raise Unhashable(str(exc)) from None
        columns = tuple(map(str, value.columns)) if isinstance(value, pd.DataFrame) else (str(value.name),)
        dtypes = tuple(map(str, value.dtypes)) if isinstance(value, pd.DataFrame) else (str(value.dtype),)
        return (type(value).__name__, columns, dtypes, hashlib.blake2b(digest, digest_size=16).digest())
    if isinstance(value, list | tuple):
        return (type(value).__name__, *(fingerprint(v) for v in value))
    if isinstance(value, dict):
        return ("dict", *sorted((str(k), fingerprint(v)) for k, v in value.items()))
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise Unhashable(type(value).__name__)
