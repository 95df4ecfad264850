"""Tables as people read them: every cell written by format.py, as the cards write it
(11.7 s, 61.0 %, $0.065, 30,692, and — for nothing).

The numbers stay numbers underneath: the formatter's text goes in as a pandas Styler's
display values, which Streamlit shows in place of a number or date that has no
column_config format, while a click on a column header still sorts by the value (text
columns would sort "9.8 s" after "11.7 s"). A column_config `format` would take
precedence over the display text, so number and date columns here get none."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from dashboard import format as fmt
from dashboard.strings import plain

Formatter = Callable[[Any], str]


def styled(frame: pd.DataFrame, formats: Mapping[str, Formatter]) -> Styler:
    """`frame` with each column in `formats` displayed by its formatter; a missing value
    as an em dash (the formatter is not asked about it); a text column's "unknown" and
    "unknown-model" in the page's words, as the charts write them."""
    present: dict[Any, Any] = {column: formatter for column, formatter in formats.items() if column in frame}
    for column in frame.columns:
        values = frame[column]
        text = column not in present and not pd.api.types.is_numeric_dtype(values.dtype)
        if text and values.isin(list(fmt.UNKNOWN)).any():
            present[column] = fmt.name
    return frame.style.format(present, na_rep=fmt.MISSING)


def show(data: pd.DataFrame | Styler, columns: Mapping[str, Any]) -> None:
    """The table across the page, missing values as an em dash (never "None")."""
    st.dataframe(data, column_config=dict(columns), hide_index=True, width="stretch", placeholder=fmt.MISSING)


def when(tz: str) -> Formatter:
    """An instant as a local time to the minute, as everywhere on the page."""
    return lambda value: fmt.timestamp(value, tz) or fmt.MISSING


def day(tz: str) -> Formatter:
    """An instant's local calendar day."""
    return lambda value: fmt.day(pd.Timestamp(value).tz_convert(tz).date())


def percent_bar(share: pd.Series) -> pd.Series:
    """A 0-1 share as 0-100 for a ProgressColumn: a progress bar takes no display text,
    only a printf format, and printf cannot multiply by 100 (Streamlit's own "percent"
    shows 60.97%, two digits where the rest of the page shows one)."""
    return share * 100


def with_other(
    frame: pd.DataFrame, column: str, folded: str = "folded", label: str | None = None
) -> pd.DataFrame:
    """`frame` with its row of folded names (`column` NULL, `folded` of them: queries keep
    a breakdown's busiest names, setup/views.sql kept_names) named "other 99,980", or
    `label` (the whole page's, for the highlighted user's part of it)."""
    if folded not in frame or not frame[folded].notna().any():
        return frame
    rows = frame[folded].notna()
    names = frame[column].astype(object).copy()
    names[rows] = [label or plain("names.other", n=fmt.count(n)) for n in frame.loc[rows, folded]]
    return frame.assign(**{column: names})


def other_label(frame: pd.DataFrame, column: str, folded: str = "folded") -> str | None:
    """The name of `frame`'s row of folded names (with_other), if it has one."""
    if folded not in frame:
        return None
    rows = frame.loc[frame[folded].notna(), column]
    return str(rows.iloc[0]) if len(rows) else None
