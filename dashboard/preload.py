"""The charts' and widgets' code, loaded by the sign-in page while the person types.

A first page after signing in waited most of its time (2.6 s of 2.7 s at 1M requests,
bench/browser_bench.py) for the browser to fetch and compile the charts' code, which
Streamlit loads only when a page first mounts a chart: Plotly's 4.7 MB and Vega's (the
cards' sparklines) 0.8 MB with its helpers. The sign-in page has no chart; it imports the
same modules, by the same addresses, so that the browser holds them compiled when the
Overview mounts its charts. Nothing is drawn and nothing is added to the page's tree but
one script; if Streamlit's build names its files otherwise, nothing is preloaded.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

# Streamlit's own chunks (static/js/<name>.<hash>.js) that a first page loads lazily:
# the Plotly element, the card (st.metric) and the Vega embed its sparkline loads; then
# the signed-in pages' widgets, which the sign-in page does not have (the sidebar's
# drop-down lists and page links, the users' measure and split, the downloads; the Nodes
# page's tables): fetched after the sign-in's run, while the charts drew, they were the
# Overview's last elements to appear (0.3-0.5 s after its charts, bench/browser_bench.py)
CHUNKS = (
    "PlotlyChart",
    "Metric",
    "loadVegaEmbed",
    "embed",
    "vega-interpreter",
    "Selectbox",
    "Multiselect",
    "PageLink",
    "Button",
    "ButtonGroup",
    "Checkbox",
    "DownloadButton",
    "DataFrame",
)
STATIC_JS = Path(st.__file__).parent / "static" / "static" / "js"


@functools.cache
def chunk_files(folder: Path = STATIC_JS) -> tuple[str, ...]:
    """The file names of CHUNKS in Streamlit's build, those that exist, in that order."""
    found = []
    for chunk in CHUNKS:
        files = sorted(folder.glob(f"{chunk}.*.js"))
        if len(files) == 1:  # a name that is not one file is not the chunk we know
            found.append(files[0].name)
    return tuple(found)


def script(files: tuple[str, ...]) -> str:
    """A script importing `files`, addressed as the page's own bundle addresses them (its
    folder, whatever path the dashboard is served under); a failed import is ignored."""
    # file names are Streamlit's own, and JSON all the same: data, never markup
    names = json.dumps(list(files)).replace("</", "<\\/")
    return (
        "<script>(() => {"
        "const main = document.querySelector('script[src*=\"static/js/index\"]');"
        "if (!main) return;"
        f"for (const name of {names}) import(new URL(name, main.src).href).catch(() => {{}});"
        "})();</script>"
    )


def chart_code() -> None:
    """On the sign-in page: start loading the charts' code (a script, nothing shown)."""
    files = chunk_files()
    if files:
        st.html(script(files), unsafe_allow_javascript=True, width="content")
