"""Reading a Plotly figure back from the JSON Streamlit sends to the browser."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np


def figure(spec: str) -> dict[str, Any]:
    """The figure with Plotly's typed arrays ({"dtype", "bdata"}) turned back into lists."""
    return decode(json.loads(spec))  # type: ignore[no-any-return]


def decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
            if "shape" not in value:
                return array.tolist()
            shape = value["shape"]  # "24, 4" as Plotly writes it, or a list
            dims = [int(d) for d in shape.split(",")] if isinstance(shape, str) else list(shape)
            return array.reshape(dims).tolist()
        return {key: decode(item) for key, item in value.items()}
    if isinstance(value, list):
        return [decode(item) for item in value]
    return value
