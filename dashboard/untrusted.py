"""Text that comes from the data or the URL, made inert for where it is shown: Markdown
(st.markdown, captions, notices, labels), Plotly's pseudo-HTML, and spreadsheet cells.

Any key holder writes `end_user` (and a model name, a user agent); a link can carry
anything. Shown as given, `[Sign in again](https://evil.example)` would be a live link
on the page, `<a href>` a link in a chart, `=HYPERLINK(...)` a formula in a spreadsheet.
"""

from __future__ import annotations

import re
from typing import Final

import pandas as pd

# Direction overrides, embeddings, isolates and marks: one of them in a name reverses or
# reorders the text after it (the rest of a sentence, a chart's labels).
BIDI: Final = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_LINE: Final = re.compile("[\t\n\r\u2028\u2029]")
# Backslash-escaped: what starts a link, an image, HTML, code, emphasis, math ($, which
# Streamlit renders with KaTeX), a table or an entity. Other punctuation stays as it is
# (dates, amounts, host:port read the same in the page's source).
_MARKDOWN: Final = re.compile(r"([\\`*_\[\]<>$~|&!#])")
# What starts a block only at the beginning of a line: a list, a heading, a quote.
_BLOCK_START: Final = re.compile(r"^([-+=])(?=\s|$)|^(\d+)([.)])(?=\s|$)")
# GFM turns bare URLs, www. names and e-mail addresses into links after the escapes are
# read (so `\:` does not stop it): an invisible word joiner breaks each pattern.
_AUTOLINK: Final = re.compile(r"(:)(?=//)|(www)(?=\.)|(@)", re.IGNORECASE)
JOINER: Final = "\u2060"
ELLIPSIS: Final = "…"
LABEL_CHARS: Final = 40  # a chart's category label; the whole name is in the tooltip
# What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
_FORMULA: Final = ("=", "+", "-", "@", "\t", "\r")


class Markdown(str):
    """Text that may go into Markdown as it is: the catalogue's own, a number formatted by
    dashboard/format.py, or untrusted text passed through `markdown()`. t() leaves such
    fields alone and escapes every other string."""

    __slots__ = ()


def neutral(text: object) -> str:
    """`text` on one line, without direction overrides or control characters."""
    value = BIDI.sub("", str(text))
    return _CONTROL.sub("\ufffd", _LINE.sub(" ", value))


def markdown(text: object) -> Markdown:
    """`text` as Markdown that shows exactly that text and nothing else: no link, image,
    HTML, math, emphasis or block of its own."""
    if isinstance(text, Markdown):
        return text
    value = neutral(text).strip()
    value = _MARKDOWN.sub(r"\\\1", value)
    value = _BLOCK_START.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", value)
    value = _AUTOLINK.sub(lambda m: m[0] + JOINER, value)
    return Markdown(value)


def short(text: object, limit: int = LABEL_CHARS) -> str:
    """`text` cut to `limit` characters with an ellipsis (direction overrides removed)."""
    value = neutral(text)
    return value if len(value) <= limit else value[: limit - 1] + ELLIPSIS


def html(text: object) -> str:
    """`text` for Plotly, which reads <b>, <br>, <a href> and entities in every label,
    legend, hover text and title: shown as written, on one line, direction neutral."""
    return neutral(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def label(text: object) -> str:
    """A category's label in a chart: short, escaped for Plotly."""
    return html(short(text))


def csv_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every text cell that a spreadsheet would read as a formula prefixed
    with a single quote; numbers stay numbers (a negative amount is not text)."""
    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_datetime64_any_dtype(column.dtype):
            continue
        out[name] = column.map(lambda v: "'" + v if isinstance(v, str) and v.startswith(_FORMULA) else v)
    if not isinstance(out.columns, pd.MultiIndex):
        out.columns = [csv_cell(c) if isinstance(c, str) else c for c in out.columns]
    return out


def csv_cell(value: str) -> str:
    return "'" + value if value.startswith(_FORMULA) else value
