"""Figures shared by every session. A figure builder is pure: the same data, highlight
and language give the same figure, so each figure is built once (1 to 5 ms) and handed to
every session that shows it. `st.plotly_chart` only reads it, but asks for its dict on every run: a deep copy
of every array, about 1 ms a chart, so a shared figure makes that dict once. Nothing may
change a figure after its builder returns it.

That dict is also what the browser draws (`frozen`): without the template plotly.py adds
(Streamlit's, by default; our own look is the figure's layout, dashboard/figures/common.py)
and with a `datarevision` that names its data. The browser's Plotly draws a chart once,
and when Streamlit hands it the same figure again right after mounting, it then redraws
nothing (a template, a new object each time, or arrays without a revision made it compute
and draw every chart twice per click: issue 30).

A frame argument is known by the bytes it pickles to (a tenth of the time of hashing its
values with pandas): equal bytes are an equal frame, and a frame laid out differently
only costs a second build."""

from __future__ import annotations

import functools
import hashlib
import json
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
        result: R = _FIGURES.get(key, lambda: frozen(builder(*args, **kwargs)))
        return result

    return built


class SharedFigure(go.Figure):  # type: ignore[misc]  # plotly ships no types
    """A figure that is never changed after it is built: its dict is made once."""

    _shared_dict: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return self._shared_dict


def frozen(value: R) -> R:
    """A figure made a SharedFigure (its dict made once, as the browser is to draw it);
    anything else as it is."""
    if isinstance(value, go.Figure) and not isinstance(value, SharedFigure):
        spec = value.to_dict()
        layout = spec.setdefault("layout", {})
        layout.pop("template", None)
        layout["datarevision"] = data_revision(spec.get("data", []))
        value.__class__ = SharedFigure
        value._shared_dict = spec
    return value


def data_revision(data: list[Any]) -> str:
    """A digest of a figure's traces: equal for equal data, different for any change."""
    text = json.dumps(data, sort_keys=True, default=_plain, allow_nan=True)
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _plain(value: Any) -> Any:
    tolist = getattr(value, "tolist", None)  # a NumPy array or number: all of it, not its repr
    return tolist() if callable(tolist) else str(value)


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
