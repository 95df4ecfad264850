"""The room a figure reserves for its labels (dashboard/figures/margins.py): what it reads
from a layout, and that it follows the labels it holds. Whether Plotly then needs no more
is checked in a browser, tests/test_chart_draws_browser.py."""

from __future__ import annotations

from typing import Any

import pytest

from dashboard.figures import margins
from dashboard.figures.common import LOOK, _figure, categories


def room(layout: dict[str, Any], traces: list[dict[str, Any]] | None = None, **kw: Any) -> dict[str, int]:
    return margins.reserved(layout, traces or [], **kw)


def test_text_is_measured_by_the_pages_font_tags_read_and_lines_apart() -> None:
    assert margins.text_width("0") == pytest.approx(497 * 12 / 1000)
    assert margins.text_width("mmm", 14) == pytest.approx(3 * 829 * 14 / 1000)
    assert margins.text_width("a&lt;b") == margins.text_width("a<b")  # an entity is one character
    assert margins.text_width("<b>ab</b>") == margins.text_width("ab")  # a tag takes no room
    assert margins.text_width("ab<br>abcd") == margins.text_width("abcd")  # the widest line
    assert margins.text_width("가나") == pytest.approx(2 * 960 * 12 / 1000)  # wide: 0.96 em
    assert margins.text_width("é") == pytest.approx(650 * 12 / 1000)  # unlisted: 0.65 em


def test_nothing_to_label_keeps_the_edge_and_a_builders_own_margin_stands() -> None:
    hidden = {"xaxis": {"visible": False}, "yaxis": {"showticklabels": False}}
    assert room(hidden) == dict.fromkeys("lrtb", margins.EDGE)
    assert room({**hidden, "margin": {"t": 48, "l": 200}})["t"] == 48
    assert room({**hidden, "margin": {"t": 48, "l": 200}})["l"] == 200


def test_a_value_axis_takes_its_widest_label_and_its_title() -> None:
    short = room({"yaxis": {"ticktext": ["0", "5"]}})["l"]
    long = room({"yaxis": {"ticktext": ["0", "5,000,000"]}})["l"]
    titled = room({"yaxis": {"ticktext": ["0", "5,000,000"], "title": {"text": "Tokens"}}})["l"]
    assert long - short == pytest.approx(margins.text_width("5,000,000") - margins.text_width("5"), abs=1)
    assert titled - long == pytest.approx(margins.Y_TITLE_GAP + margins.TITLE, abs=1)
    outside = room({"yaxis": {"ticktext": ["0", "5,000,000"], "ticks": "outside"}})["l"]
    assert outside - long == margins.OUTSIDE_TICKS


def test_a_right_axis_takes_the_right_less_the_plot_the_x_domain_leaves_it() -> None:
    right = {"side": "right", "overlaying": "y", "ticktext": ["0 %", "100 %"], "title": {"text": "Rate"}}
    full = room({"yaxis2": right})["r"]
    short_domain = room({"yaxis2": right, "xaxis": {"domain": [0, 0.9]}}, width=200)["r"]
    assert full > 60 and full - short_domain == pytest.approx(20, abs=1)
    assert room({"yaxis2": right})["l"] == margins.EDGE


def test_labels_across_the_bottom_are_a_line_or_two_or_turned_where_they_do_not_fit() -> None:
    line = room({"xaxis": {"ticktext": ["a", "b"]}})["b"]
    assert line == margins.EDGE + margins.LINE + margins.TICK_GAP + margins.SLACK
    two = room({"xaxis": {"tickformatstops": [{"value": "%H:%M<br>%b %-d"}]}})["b"]
    assert two - line == margins.LINE
    korean = room({"xaxis": {"tickformatstops": [{"value": "%-m월 %-d일"}]}})["b"]
    assert korean - line == margins.WIDE_LINE - margins.LINE
    names = [f"a client named {i}" for i in range(8)]
    turned = room({"xaxis": {"ticktext": names}}, width=280)["b"]
    level = room({"xaxis": {"ticktext": names, "tickangle": 0}}, width=280)["b"]
    assert turned - level == pytest.approx(margins.text_width(names[0]) / 2 - 0.13 * margins.LINE, abs=1)


def test_a_legend_above_takes_a_row_when_its_items_fit_else_a_row_per_column_of_the_widest() -> None:
    legend = {"orientation": "h", "yanchor": "bottom", "y": 1.0}
    traces = [{"name": name} for name in ("Cached", "Uncached", "Cache hit rate")]
    one_row = room({"showlegend": True, "legend": legend}, traces, width=600)["t"]
    assert one_row == margins.EDGE + margins.LEGEND_FRAME + margins.LEGEND_ROW + margins.SLACK
    three_rows = room({"showlegend": True, "legend": legend}, traces, width=150)["t"]
    assert three_rows - one_row == 2 * margins.LEGEND_ROW
    hidden = [{**trace, "showlegend": False} for trace in traces]
    assert room({"showlegend": True, "legend": legend}, hidden, width=150)["t"] == margins.EDGE
    assert room({"showlegend": False, "legend": legend}, traces)["t"] == margins.EDGE


def test_a_colour_bar_takes_its_labels_or_its_title() -> None:
    bar = {
        "type": "heatmap",
        "colorbar": {"thickness": 12, "ticktext": ["0", "1,000"], "title": {"text": "R"}},
    }
    assert room({}, [bar])["r"] == pytest.approx(
        margins.EDGE + margins.COLORBAR + margins.text_width("1,000") + 12 + margins.SLACK, abs=1
    )
    assert room({}, [{**bar, "showscale": False}])["r"] == margins.EDGE


def test_every_figure_carries_the_room_of_its_own_labels() -> None:
    """Through _figure, as every builder: the margin follows the names it draws, wider
    names more room, and the axes keep automargin (a label wider than estimated still fits)."""
    narrow = _figure([{"type": "bar", "y": ["a"], "x": [1]}], {"yaxis": categories(["a"])}, legend=False)
    wide = _figure(
        [{"type": "bar", "y": ["a" * 40], "x": [1]}], {"yaxis": categories(["a" * 40])}, legend=False
    )
    assert wide.layout.margin.l > narrow.layout.margin.l + 100
    assert narrow.layout.margin.pad == LOOK["margin"]["pad"]
    assert wide.layout.yaxis.automargin is True and wide.layout.xaxis.automargin is True


def test_labels_on_every_side_widen_each_by_the_gap_plotly_then_adds() -> None:
    """Plotly adds the narrowest margin (at most 12 px) outside every label: with labels on
    all four sides none stays at the 8 px edge, and each needs 4 px more."""
    three_sides = {"yaxis": {"ticktext": ["100"]}, "xaxis": {"ticktext": ["a"]}, "margin": {"t": 28}}
    four_sides = {**three_sides, "yaxis2": {"side": "right", "overlaying": "y", "ticktext": ["1 %"]}}
    three, four = room(three_sides), room(four_sides)
    assert three["r"] == margins.EDGE
    assert {side: four[side] - three[side] for side in "lb"} == dict.fromkeys(
        "lb", margins.PUSH_GAP - margins.EDGE
    )
    assert four["t"] == three["t"] == 28  # the builder's own, held nothing of ours
