"""The room a chart's labels take, reserved before Plotly draws it.

Plotly lays a chart out with the margins it is given, measures its tick labels, titles,
legend and colour bar, and when they need more room (`automargin`) draws the whole chart
a second time. With the 8 px margins of Streamlit's theme every chart of the Overview was
drawn twice per click; reserving the room here saves that second pass, a tenth to a quarter
of a click in the browser (issue 30, docs/benchmarks.md). `automargin` stays on: a label
wider than this estimate still fits, at the cost of the second pass, never cut.

The estimate reads what the layout holds (tick texts, titles, legend names) with the
widths of the page's font, Source Sans, as Chromium measures it (per character, in
thousandths of the font size; a wide East Asian character as 0.96 em, Noto Sans CJK's
0.92 and a little; anything else not listed as 0.65 em). The constants are Plotly's
spacing as measured on the page (tests/test_chart_draws_browser.py checks that every
chart of the Overview and the Nodes page keeps within them, in both languages, at 1280
and 1440 px; tests/test_chart_margins.py the estimate itself).

What depends on how wide a chart is drawn (a legend's rows, labels turned on their side)
is estimated for `width`, the narrowest plot the page gives the chart at 1280 px: wider,
a few pixels stay free above a legend; narrower, Plotly's second pass makes the room.
"""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

# Source Sans (Streamlit's font) in Chromium: advance widths in 1/1000 em
_WIDTHS = {
    **dict.fromkeys("0123456789#$+<=>^~", 497),
    " ": 200, "!": 289, '"': 426, "%": 824, "&": 609, "'": 249, "(": 303, ")": 303, "*": 418,
    ",": 249, "-": 311, ".": 249, "/": 350, ":": 249, ";": 249, "?": 425, "@": 847, "[": 303,
    "\\": 350, "]": 303, "_": 500, "`": 542, "{": 303, "|": 241, "}": 303, "·": 249, "…": 948,
    "—": 800, "→": 619,
    "A": 543, "B": 588, "C": 571, "D": 615, "E": 527, "F": 494, "G": 617, "H": 652, "I": 263,
    "J": 479, "K": 579, "L": 486, "M": 727, "N": 647, "O": 664, "P": 566, "Q": 664, "R": 569,
    "S": 534, "T": 536, "U": 645, "V": 515, "W": 786, "X": 513, "Y": 476, "Z": 539,
    "a": 504, "b": 553, "c": 456, "d": 555, "e": 496, "f": 292, "g": 504, "h": 544, "i": 246,
    "j": 247, "k": 495, "l": 255, "m": 829, "n": 547, "o": 542, "p": 555, "q": 555, "r": 347,
    "s": 419, "t": 338, "u": 544, "v": 467, "w": 719, "x": 446, "y": 467, "z": 425,
}  # fmt: skip
_WIDE_EM, _OTHER_EM = 960, 650

EDGE = 8  # the figure's own margin outside every label (LOOK's margin)
PUSH_GAP = 12  # Plotly's gap outside a label: the narrowest margin, at most this
TICK_GAP = 9  # tick labels to the plot: margin.pad and a pixel
OUTSIDE_TICKS = 8  # tick marks drawn outside, and their gap
TITLE = 20  # an axis title's line at 14 px (19 measured; Korean glyphs stand a little taller)
Y_TITLE_GAP = 15  # a value axis's tick labels to its title
X_TITLE_GAP = 12
LINE = 16  # a line of tick labels at 12 px
WIDE_LINE = 18  # the same with Korean (the fallback font's line is taller)
LEGEND_ROW, LEGEND_FRAME = 19, 10  # a horizontal legend's row, and its frame
LEGEND_ITEM = 45  # an item's symbol and gaps beside its text
COLORBAR = 28  # a colour bar beside its labels: offset, bar, gaps
SLACK = 2  # rounding, and a label a pixel wider than measured
PLOT_WIDTH = 280  # the narrowest plot a chart gets at 1280 px (two columns on a page)
WIDE_PLOT_WIDTH = 680  # a chart across the page, at 1280 px
KOREAN_DATE_OVERHANG = 6  # a Korean day label past the plot's end (_date_overhang)
_TAG = re.compile(r"<[^>]*>")


def text_width(text: str, size: float = 12) -> float:
    """The width of `text` as Plotly draws it (tags and entities read, <br> a new line),
    in px at `size` px: its widest line."""
    lines = [html.unescape(_TAG.sub("", line)) for line in text.split("<br>")]
    return max(sum(_char(c) for c in line) for line in lines) * size / 1000


def _char(c: str) -> int:
    width = _WIDTHS.get(c)
    if width is not None:
        return width
    return _WIDE_EM if unicodedata.east_asian_width(c) in ("W", "F") else _OTHER_EM


def _wide(texts: Iterable[str]) -> bool:
    return any(unicodedata.east_asian_width(c) in ("W", "F") for text in texts for c in text)


def reserved(
    layout: Mapping[str, Any], traces: list[dict[str, Any]], width: int = PLOT_WIDTH
) -> dict[str, int]:
    """The margins (l, r, t, b) that hold this chart's labels: the layout's own where they
    are wider."""
    pushes: dict[str, float] = dict.fromkeys("lrtb", 0.0)  # what each side holds, px
    for key, axis in layout.items():
        if not isinstance(axis, dict) or key[:5] not in ("xaxis", "yaxis") or not _shown(axis):
            continue
        if key.startswith("yaxis"):
            side = "r" if axis.get("side") == "right" else "l"
            room = _y_room(axis)
            if side == "r" and room:  # drawn at the x domain's end: the rest of the plot holds some
                end = ((layout.get("xaxis") or {}).get("domain") or (0, 1))[1]
                room -= (1 - float(end)) * width
            pushes[side] = max(pushes[side], room)
        elif axis.get("side", "bottom") == "bottom":
            pushes["b"] = max(pushes["b"], _x_room(axis, width))
            pushes["r"] = max(pushes["r"], _date_overhang(axis))
    pushes["t"] = max(pushes["t"], _legend_room(layout, traces, width))
    pushes["r"] = max(pushes["r"], _colorbar_room(traces))
    own = {side: int((layout.get("margin") or {}).get(side, EDGE)) for side in "lrtb"}

    def margins(gap: int) -> dict[str, int]:
        return {
            side: max(own[side], math.ceil(pushes[side] + gap + SLACK)) if pushes[side] > 0 else own[side]
            for side in "lrtb"
        }

    # Plotly adds to every push the narrowest margin, up to 12 px: margins all wider than
    # the edge widen every push (what made a chart with labels on all four sides need 4 px
    # more on each than measured beside a bare side)
    first = margins(EDGE)
    gap = min(PUSH_GAP, *first.values())
    return first if gap <= EDGE else margins(gap)


def _shown(axis: Mapping[str, Any]) -> bool:
    return axis.get("visible", True) is not False


def _labelled(axis: Mapping[str, Any]) -> bool:
    return _shown(axis) and axis.get("showticklabels", True) is not False


def _formats(axis: Mapping[str, Any]) -> list[str]:
    """A time axis's label formats (time_axis.py's stops); none on another axis."""
    return [str(stop.get("value", "")) for stop in axis.get("tickformatstops") or ()]


def _ticks(axis: Mapping[str, Any]) -> float:
    return OUTSIDE_TICKS if axis.get("ticks") == "outside" else 0


def _title(axis: Mapping[str, Any]) -> str:
    title = axis.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    return str(text) if text else ""


def _y_room(axis: Mapping[str, Any]) -> float:
    """A vertical axis's labels and title, across."""
    room = 0.0
    if _labelled(axis):
        texts = [str(text) for text in axis.get("ticktext") or ()]
        room = max((text_width(text) for text in texts), default=0) + TICK_GAP + _ticks(axis)
    if _title(axis):
        room += Y_TITLE_GAP + TITLE
    return room


def _x_room(axis: Mapping[str, Any], width: int) -> float:
    """A horizontal axis's labels and title, down: a line of labels (dates are always
    level), or labels turned 30 degrees where they would not fit side by side."""
    room = 0.0
    if _labelled(axis):
        texts = [str(text) for text in axis.get("ticktext") or ()]
        formats = _formats(axis)
        line = WIDE_LINE if _wide(texts + formats) else LINE
        lines = max((text.count("<br>") + 1 for text in texts + formats), default=1)
        widest = max((text_width(text) for text in texts), default=0)
        level = axis.get("tickangle") == 0 or not texts or widest + 4 <= width / len(texts)
        room = (line * lines if level else widest / 2 + line * 0.87) + TICK_GAP + _ticks(axis)
    if _title(axis):
        room += X_TITLE_GAP + TITLE
    return room


def _date_overhang(axis: Mapping[str, Any]) -> float:
    """How far a time axis's last label reaches past the plot: a Korean date by the day
    ("11월 30일", 50 px) on Plotly's own step (a month or longer) ends up to 6 px past it.
    Only there: an English date stayed inside, and room reserved where none was needed
    moved Plotly's ticks (the plot narrower), its last label to the end and past it."""
    formats = _formats(axis)
    by_day = formats and not any("%H" in f for f in formats) and "dtick" not in axis
    return KOREAN_DATE_OVERHANG if _labelled(axis) and by_day and _wide(formats) else 0


def _legend_room(layout: Mapping[str, Any], traces: list[dict[str, Any]], width: int) -> float:
    """A horizontal legend above the plot (the page's, common.py): its rows at `width`.
    Plotly puts the items in one row when they fit, else in columns of the widest item."""
    legend = layout.get("legend") or {}
    above = legend.get("orientation") == "h" and legend.get("yanchor") == "bottom" and legend.get("y", 0) >= 1
    names = [str(trace.get("name") or "") for trace in traces if trace.get("showlegend", True) is not False]
    if not layout.get("showlegend") or not above or not names:
        return 0
    items = [text_width(name) + LEGEND_ITEM for name in names]
    per_row = len(items) if sum(items) <= width else max(1, int(width // max(items)))
    rows = math.ceil(len(items) / per_row)
    line = WIDE_LINE + 1 if _wide(names) else LEGEND_ROW
    return LEGEND_FRAME + LEGEND_ROW + line * (rows - 1)


def _colorbar_room(traces: list[dict[str, Any]]) -> float:
    """A colour bar right of the plot: its labels or its title, the wider."""
    room = 0.0
    for trace in traces:
        bar = trace.get("colorbar")
        if not isinstance(bar, dict) or trace.get("showscale") is False:
            continue
        labels = max((text_width(str(text)) for text in bar.get("ticktext") or ()), default=0)
        title = text_width(_title(bar), 14)
        room = max(room, COLORBAR + max(labels + float(bar.get("thickness", 30)), title))
    return room
