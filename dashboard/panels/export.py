"""The downloads: a page's result sets as CSV files a spreadsheet opens safely, their
times in the page's zone, named for the view and the range's days."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pandas as pd
import streamlit as st

from dashboard import untrusted
from dashboard.panels.loading import Page
from dashboard.strings import t
from queries.filters import Filters


def csv_bytes(frame: pd.DataFrame, tz: str | None = None) -> bytes:
    """The frame as a spreadsheet opens it safely: a name such as =HYPERLINK(...) stays text.
    Lines end in CRLF (RFC 4180), so that a carriage return inside a name is quoted too.
    With `tz`, every time column is written in that zone and says so in its header
    ("bucket_start (Asia/Seoul)"): a bucket was local and its start UTC, unmarked."""
    frame = frame.drop(columns=["folded", "users_folded", "clients_folded"], errors="ignore")  # named already
    if tz is not None:
        frame = _local_times(frame, tz)
    return untrusted.csv_frame(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def _local_times(frame: pd.DataFrame, tz: str) -> pd.DataFrame:
    """Time columns as local wall-clock times in `tz` (zone-less ones are local already:
    the buckets), each header naming the zone."""
    out = frame.copy()
    renamed = {}
    for column in frame.columns:
        values = frame[column]
        if isinstance(values.dtype, pd.DatetimeTZDtype):
            out[column] = values.dt.tz_convert(tz).dt.tz_localize(None)
        elif not pd.api.types.is_datetime64_dtype(values.dtype):
            continue
        renamed[column] = f"{column} ({tz})"
    return out.rename(columns=renamed)


def csv_name(view: str, filters: Filters) -> str:
    """A download's file name: the view and the range's local days, by_user_2026-12-01_2026-12-07.csv."""
    if filters.start is None or filters.end is None:
        return f"{view}.csv"
    zone = ZoneInfo(filters.tz)
    first = filters.start.astimezone(zone).date()
    last = (filters.end - dt.timedelta(microseconds=1)).astimezone(zone).date()
    return f"{view}_{first.isoformat()}_{last.isoformat()}.csv"


def downloads(page: Page, keys: tuple[tuple[str, str], ...]) -> None:
    with st.expander(t("download.header")):
        for column, (key, label) in zip(st.columns(len(keys)), keys, strict=True):
            column.download_button(
                t(label),
                # The bytes, not a callable: Streamlit disables a button whose file is a
                # callable while the browser asks the server to make it, so the second click
                # of a double click fell on a disabled button and gave no file. Bytes make
                # the button a plain link to a file whose id is its content's hash (the same
                # across reruns), and every click downloads it. The frames are aggregates: a
                # few hundred rows at most.
                csv_bytes(page.data[key], page.filters.tz),
                file_name=csv_name(key, page.filters),
                mime="text/csv",
                key=f"download_{key}",
                # No rerun on click: the file depends on nothing the click changes, so a
                # rerun would have nothing to do (and a person would see the page redraw).
                on_click="ignore",
            )
