"""The page: for now, what the store holds and how fresh it is."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.strings import t
from etl.config import load_config
from queries.runner import run

ETL_COMMAND = "python -m etl run --source postgresql://USER:PASSWORD@HOST:5432/litellm"


def main() -> None:
    st.set_page_config(page_title=t("title"), layout="wide")
    config = load_config()
    st.title(t("title"))
    status = run("store_status", config.store).iloc[0]
    tz = config.dashboard.timezone
    if status["requests"] == 0:
        st.subheader(t("empty.title"))
        st.write(t("empty.body"))
        st.code(ETL_COMMAND, language="bash")
        return
    if status["last_run_status"] == "failed":
        st.error(t("status.failed_run", error=status["last_run_error"]))
    st.info(t("status.pages_pending"))
    cols = st.columns(4)
    cols[0].metric(t("status.requests"), f"{int(status['requests']):,}")
    cols[1].metric(t("status.users"), f"{int(status['users']):,}")
    cols[2].metric(t("status.last"), _local(status["last_request"], tz))
    cols[3].metric(t("status.last_ok_run"), _local(status["last_ok_run"], tz))
    st.caption(t("status.timezone", tz=tz))


def _local(value: pd.Timestamp, tz: str) -> str:
    if pd.isna(value):
        return "—"
    return str(value.tz_convert(tz).strftime("%Y-%m-%d %H:%M"))
