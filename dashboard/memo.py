"""Figures shared by every session. A figure builder is pure: the same data, highlight
and language give the same figure, so each figure is built once (1 to 5 ms) and handed to
every session that shows it. `st.plotly_chart` only reads it, but asks for its dict on every run: a deep copy
with every array turned to base64, about 1 ms a chart, so a shared figure makes that dict
once. Nothing may change a figure after its builder returns it.

A frame argument is known by the bytes it pickles to (a tenth of the time of hashing its
values with pandas): equal bytes are an equal frame, and a frame laid out differently
only costs a second build."""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Callable, Hashable
from typing import Any, ParamSpec, TypeVar

import pandas as pd
import plotly.graph_objects as go

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
        result: R = _FIGURES.get(key, lambda: _frozen(builder(*args, **kwargs)))
        return result

    return built


class SharedFigure(go.Figure):  # type: ignore[misc]  # plotly ships no types
    """A figure that is never changed after it is built: its dict is made once."""

    _shared_dict: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self._shared_dict


def _frozen(value: R) -> R:
    if isinstance(value, go.Figure) and not isinstance(value, SharedFigure):
        spec = value.to_dict()
        value.__class__ = SharedFigure
        value._shared_dict = spec
    return value


def fingerprint(value: Any) -> Hashable:
    """A hashable stand-in for a builder's argument: a frame by a digest of its pickle
    (which holds its index, columns, types and values)."""
    if isinstance(value, pd.DataFrame | pd.Series):
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except (TypeError, pickle.PicklingError, AttributeError) as exc:
            raise Unhashable(str(exc)) from None
        return (type(value).__name__, hashlib.blake2b(data, digest_size=16).digest())
    if isinstance(value, list | tuple):
        return (type(value).__name__, *(fingerprint(v) for v in value))
    if isinstance(value, dict):
        return ("dict", *sorted((str(k), fingerprint(v)) for k, v in value.items()))
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise Unhashable(type(value).__name__)
