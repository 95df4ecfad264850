"""The one way a figure reaches the page: `plot(figure, key=...)`, and the style sheet that
gives the charts the dark theme's colours where the page is dark.

Streamlit's own Plotly theme is not used (theme=None). Its frontend applies the theme by
making a new template for a chart each time it mounts one, and Plotly computes and draws
anew a chart whose template is a new object: every chart of a page was drawn twice per
click, a third to a half of the browser's work for a range change or a highlight (issue
30; docs/benchmarks.md). The figures carry the theme's look in their own layout instead
(dashboard/figures/common.py: LOOK, the light theme's colours), their dict has no template
and names its data (dashboard/memo.py), and CHART_STYLE below swaps the few colours that
differ on a dark page: the text, the grid and the hover labels drawn in exactly the light
theme's colours, by CSS's light-dark() on the page's colour scheme (Streamlit sets it on
the app's container). A colour a figure chose itself is never touched.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard import memo
from dashboard.figures import BACKGROUND, GRID, HOVER_BORDER, STRONG_TEXT, TEXT

# the dark theme's colours of the same parts (Streamlit 1.67 with .streamlit/config.toml)
DARK = {
    TEXT: "#e6eaf1",
    STRONG_TEXT: "#fafafa",
    GRID: "#31333f",
    BACKGROUND: "#171614",
    HOVER_BORDER: "#4a4742",
}


def _rgb(color: str, alpha: float | None = None) -> str:
    """A colour as the browser writes it in an element's style: rgb(128, 132, 149), or
    with `alpha` rgba(128, 132, 149, 0.5)."""
    red, green, blue = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})" if alpha is None else f"rgba({red}, {green}, {blue}, {alpha})"


def _rule(scope: str, what: str, light: str) -> str:
    return (
        f".stPlotlyChart {scope}[style*='{what}: {_rgb(light)}']"
        f" {{ {what}: light-dark({light}, {DARK[light]}) !important; }}"
    )


CHART_STYLE = "<style>\n{}\n</style>".format(
    "\n".join(
        (
            _rule("", "fill", TEXT),  # ticks, axis titles, annotations, hover text
            _rule("", "fill", STRONG_TEXT),  # the legend
            _rule("", "stroke", GRID),  # grid and zero lines
            _rule("", "fill", BACKGROUND),  # the plot area's background, the hover labels'
            # the chart's own background: Plotly paints it on its SVG elements
            f".stPlotlyChart .main-svg[style*='background: {_rgb(BACKGROUND)}']"
            f" {{ background: light-dark({BACKGROUND}, {DARK[BACKGROUND]}) !important; }}",
            _rule(".hoverlayer ", "stroke", HOVER_BORDER),
            # the line under a hover's spike line: drawn in the background's colour, an attribute
            f".stPlotlyChart .spikeline[stroke='{_rgb(BACKGROUND)}']"
            f" {{ stroke: light-dark({BACKGROUND}, {DARK[BACKGROUND]}) !important; }}",
            # the tool bar, which Plotly styles by rules of its own (as for the light theme)
            ".stPlotlyChart .modebar-group { background-color: light-dark("
            f"{_rgb(BACKGROUND, 0.5)}, {_rgb(DARK[BACKGROUND], 0.5)}) !important; }}",
            ".stPlotlyChart .modebar-btn .icon path"
            " { fill: light-dark(rgba(68,68,68,0.3), rgba(255,255,255,0.3)) !important; }",
            ".stPlotlyChart .modebar-btn:hover .icon path, .stPlotlyChart .modebar-btn.active .icon path"
            " { fill: light-dark(rgba(68,68,68,0.7), rgba(255,255,255,0.7)) !important; }",
        )
    )
)


def style() -> None:
    """The charts' dark-theme colours: once per page run, before any chart."""
    st.html(CHART_STYLE)  # style only: Streamlit gives it no room on the page


def plot(figure: Any, *, key: str, **kwargs: Any) -> Any:
    """`st.plotly_chart` of `figure` as the browser is to draw it (frozen: no template, its
    data named), without Streamlit's theme. Returns what st.plotly_chart returns."""
    return st.plotly_chart(memo.frozen(figure), key=key, theme=None, **kwargs)
