"""The Statements page: each month's statement, closed (as written when the month was
closed: never recomputed) or still open (a draft from the store as it is now).
Administrators see every line; a student's reader is scoped to their keys, so they see
their own lines only. Downloads: the lines as CSV, and a document that prints on A4."""

from __future__ import annotations

import datetime as dt
import html
import re

import pandas as pd
import streamlit as st

from dashboard import format as fmt
from dashboard import tables, untrusted
from dashboard.panels import csv_bytes
from dashboard.strings import plain, t
from queries import pages

# the line columns a table and the document show, in order, with their kind of value
COLUMNS: dict[str, str] = {  # the money first: at 1280 px the tokens are what scrolls
    "user": "text",
    "key_alias": "text",
    "client": "text",
    "spend_usd": "usd",
    "api_cost_usd": "usd",
    "budget_used": "percent",
    "requests": "count",
    "prompt_uncached_tokens": "count",
    "prompt_cached_tokens": "count",
    "completion_tokens": "count",
    "reasoning_tokens": "count",
    "key_name": "text",
    "team_id": "text",
}
HELP = {"budget_used": "statements.col.budget_used.help"}

WRITERS: dict[str, tables.Formatter] = {
    "count": fmt.count,
    "usd": lambda v: fmt.usd(v) if pd.notna(v) else fmt.MISSING,
    "percent": lambda v: fmt.percent(v) if pd.notna(v) else fmt.MISSING,
}


def render(reader: pages.StatementReader, tz: str, *, admin: bool) -> None:
    st.header(t("statements.title"))
    st.caption(t("statements.intro"))
    months = pages.statement_months(reader, tz, dt.datetime.now(dt.UTC))
    closed_at = dict(zip(months["month"], months.get("closed_at", pd.Series(dtype=object)), strict=False))
    labels = {
        month: plain(
            "statements.closed_label" if pd.notna(closed_at.get(month)) else "statements.open_label",
            month=month,
        )
        for month in months["month"]
    }
    # the newest closed month first (what a statement is asked for), else this month's draft
    closed_months = [m for m in labels if pd.notna(closed_at.get(m))]
    month = st.selectbox(
        t("statements.month"),
        list(labels),
        index=list(labels).index(closed_months[0]) if closed_months else 0,
        format_func=labels.__getitem__,
        key="statement_month",
    )
    closed = pd.notna(closed_at.get(month))
    lines = pages.statement(reader, month, tz, closed=closed)
    if closed:
        status = t("statements.closed", month=month, when=fmt.timestamp(closed_at[month], tz))
        st.success(status)
    else:
        status = t("statements.open_admin" if admin else "statements.open", month=month)
        st.info(status)
    usage, adjustments = lines[lines["kind"] == "usage"], lines[lines["kind"] == "adjustment"]
    if usage.empty:
        st.info(t("statements.empty", month=month))
    else:
        _cards(usage)
        st.subheader(t("statements.lines"))
        _table(usage)
    if not adjustments.empty:
        st.subheader(t("statements.adjustments"))
        st.caption(t("statements.adjustments_help"))
        _table(adjustments, with_month=True)
    if admin and len(months) > 1:
        with st.expander(t("statements.all_months")):
            _months(months, tz)
    _downloads(lines, month, closed=closed, status=f"{status} ({tz})")


def _cards(usage: pd.DataFrame) -> None:
    tokens = usage[["prompt_uncached_tokens", "prompt_cached_tokens", "completion_tokens"]].to_numpy().sum()
    cost = usage["api_cost_usd"]
    cards = st.columns(4)
    cards[0].metric(t("statements.requests"), fmt.count(usage["requests"].sum()))
    cards[1].metric(t("statements.tokens"), fmt.compact(float(tokens)))
    cards[2].metric(t("statements.spend"), fmt.usd(float(usage["spend_usd"].sum())))
    cards[3].metric(
        t("statements.api_cost"),
        fmt.usd(float(cost.sum())) if cost.notna().any() else t("statements.not_priced"),
        help=t("statements.api_cost_help"),
    )


def with_budget_used(lines: pd.DataFrame) -> pd.DataFrame:
    """The lines with `budget_used`: the month's spend as a share of the key's budget
    (None without a budget)."""
    budget = lines["max_budget_usd"].where(lines["max_budget_usd"] > 0)
    return lines.assign(budget_used=lines["spend_usd"] / budget)


def _table(lines: pd.DataFrame, *, with_month: bool = False) -> None:
    shown = with_budget_used(lines)
    names = (["of_month"] if with_month else []) + list(COLUMNS)
    columns = {
        name: st.column_config.Column(
            plain(f"statements.col.{name}"), help=plain(HELP[name]) if name in HELP else None
        )
        for name in names
    }
    formats: dict[str, tables.Formatter] = {
        name: WRITERS[kind] for name, kind in COLUMNS.items() if kind != "text"
    }
    tables.show(tables.styled(shown[names], formats), columns)


def _months(months: pd.DataFrame, tz: str) -> None:
    shown = months.assign(
        status=[
            t("statements.status_closed") if pd.notna(c) else t("statements.status_open")
            for c in months.get("closed_at", pd.Series([None] * len(months)))
        ],
    )
    names = ["month", "status", "closed_at", "requests", "spend_usd", "api_cost_usd", "adjustment_requests"]
    names = [n for n in names if n in shown]
    columns = {name: st.column_config.Column(plain(f"statements.col.{name}")) for name in names}
    formats = {
        "closed_at": tables.when(tz),
        "requests": fmt.count,
        "adjustment_requests": fmt.count,
        "spend_usd": fmt.usd,
        "api_cost_usd": fmt.usd,
    }
    tables.show(tables.styled(shown[names], formats), columns)


def _downloads(lines: pd.DataFrame, month: str, *, closed: bool, status: str) -> None:
    state = "closed" if closed else "draft"
    left, right = st.columns(2)
    left.download_button(
        t("statements.csv"),
        csv_bytes(with_budget_used(lines)),
        file_name=f"statement-{month}-{state}.csv",
        mime="text/csv",
        key="statement_csv",
        on_click="ignore",
    )
    right.download_button(
        t("statements.printable"),
        document(lines, month, closed=closed, status=status).encode("utf-8"),
        file_name=f"statement-{month}-{state}.html",
        mime="text/html",
        key="statement_html",
        on_click="ignore",
        help=t("statements.printable_help"),
    )


def document(lines: pd.DataFrame, month: str, *, closed: bool, status: str | None = None) -> str:
    """The statement as one HTML page that a browser prints on A4: every name escaped
    (they come from the data), numbers as the page writes them, each part's totals last;
    `status`: the sentence the page shows above it (when it was closed, or that it is open)."""
    shown = with_budget_used(lines)
    head = "".join(f"<th>{html.escape(plain(f'statements.col.{name}'))}</th>" for name in COLUMNS)
    writers: dict[str, tables.Formatter] = {
        **WRITERS,
        "text": lambda v: untrusted.html(v if pd.notna(v) else fmt.MISSING),
    }
    sections = []
    for kind, title in (
        ("usage", plain("statements.lines")),
        ("adjustment", plain("statements.adjustments")),
    ):
        part = shown[shown["kind"] == kind]
        if part.empty:
            continue
        rows = "".join(
            "<tr>"
            + "".join(f"<td class='{k}'>{writers[k](row[name])}</td>" for name, k in COLUMNS.items())
            + "</tr>"
            for _, row in part.iterrows()
        )
        cells = [
            WRITERS[k](part[name].sum(min_count=1)) if k in ("count", "usd") else ""
            for name, k in COLUMNS.items()
        ]
        cells[0] = html.escape(plain("statements.total"))
        kinds = list(COLUMNS.values())
        total = (
            "<tr class='total'>"
            + "".join(f"<td class='{k}'>{cell}</td>" for k, cell in zip(kinds, cells, strict=True))
            + "</tr>"
        )
        sections.append(
            f"<h2>{html.escape(title)}</h2><table><thead><tr>{head}</tr></thead>"
            f"<tbody>{rows}{total}</tbody></table>"
        )
    status = " ".join(
        [
            plain("statements.doc_closed") if closed else plain("statements.doc_draft"),
            _plain_text(status or ""),
        ]
    ).strip()
    body = "".join(sections) or f"<p>{html.escape(plain('statements.empty', month=month))}</p>"
    title = html.escape(plain("statements.doc_title", month=month))
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>
@page {{ size: A4 landscape; margin: 12mm; }}
body {{ font-family: "Noto Sans", "Noto Sans CJK KR", sans-serif; font-size: 9pt; color: #111; }}
h1 {{ font-size: 14pt; margin: 0 0 2mm; }} h2 {{ font-size: 11pt; margin: 5mm 0 2mm; }}
table {{ border-collapse: collapse; width: 100%; }}
th, td {{ border-bottom: 0.3pt solid #999; padding: 1mm 1.5mm; text-align: left; }}
td.count, td.usd, td.percent {{ text-align: right; font-variant-numeric: tabular-nums; }}
thead {{ display: table-header-group; }} tr {{ break-inside: avoid; }}
tr.total td {{ font-weight: 600; border-top: 0.6pt solid #111; }}
</style></head>
<body><h1>{title}</h1><p>{html.escape(status)}</p>{body}</body></html>
"""


def _plain_text(markdown: str) -> str:
    """A sentence of the page (Markdown, its fields escaped) as the document's text."""
    return re.sub(r"\\(.)", r"\1", markdown.replace("**", "").replace("`", ""))
