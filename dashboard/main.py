"""The Streamlit app: page set-up, configuration, then the page."""

from __future__ import annotations

import streamlit as st

from dashboard import overview
from dashboard.strings import t
from etl.config import load_config
from queries.runner import reader


def main() -> None:
    st.set_page_config(page_title=t("title"), page_icon=":material/monitoring:", layout="wide")
    config = load_config()
    st.title(t("title"))
    overview.render(config, reader(config.store))
