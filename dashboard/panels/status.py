"""The top of every page: the store's status (or how to fill an empty store) and how
fresh its data is, with why not to administrators."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dashboard import format as fmt
from dashboard.strings import t
from queries.runner import Reader
from settings.config import Config


def store_status(reader: Reader) -> pd.Series | None:
    """The store's status, or None after showing how to fill an empty store."""
    status = reader.run("store_status").iloc[0]
    if int(status["requests"]) == 0:
        st.subheader(t("empty.title"))
        st.write(t("empty.body"))
        st.code("python -m etl run --source postgresql://USER:PASSWORD@HOST:5432/litellm", language="bash")
        return None
    return status


def freshness(status: pd.Series, config: Config, tz: str, reader: Reader, *, reasons: bool = True) -> None:
    """How fresh the data is; with `reasons` (administrators) also why not: a failed run's
    error, a file that could not be read. Students learn that and since when, not why
    (an error can name the database, its host and user)."""
    newest = _local(status["last_request"], tz)
    last_run = status["last_ok_run"]
    st.caption(t("fresh.caption", newest=newest, run=_local(last_run, tz), tz=tz))
    if status["last_run_status"] == "failed":
        if reasons:
            st.error(t("fresh.failed", error=status["last_run_error"]))
        else:
            st.warning(t("fresh.failed_student", when=_local(status["last_run"], tz), newest=newest))
    if pd.notna(last_run):
        age = pd.Timestamp.now(tz="UTC") - last_run
        if age > pd.Timedelta(minutes=config.dashboard.stale_after_minutes):
            st.warning(
                t("fresh.stale" if reasons else "fresh.stale_student", age=fmt.age(age.total_seconds()))
            )
    if reader.last_error:
        st.warning(t("fresh.reload_failed", error=reader.last_error) if reasons else t("fresh.incomplete"))
    damaged = reader.damaged()
    if damaged:
        if reasons:
            named = "; ".join(f"{name} ({error})" for name, error in damaged.items())
            st.warning(t("fresh.damaged", files=named))
        else:
            st.warning(t("fresh.incomplete"))


def _local(value: Any, tz: str) -> str:
    return fmt.timestamp(value, tz) or t("fresh.never")
