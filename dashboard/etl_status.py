"""The administrator's "ETL status" page: is the copy from LiteLLM running, what did the
recent runs do (rows, noise dropped by reason, errors), and how fresh each source is."""

from __future__ import annotations

import datetime as dt
import os

import pandas as pd
import streamlit as st

from dashboard import format as fmt
from dashboard import tables
from dashboard.strings import plain, t
from queries.pages import RECENT_RUNS, etl_status
from queries.runner import Reader
from state import db as state_db


def render(reader: Reader, tz: str) -> None:
    """The ETL's health and newest runs, their times written in `tz` (the view's zone)."""
    st.header(t("status.title"))
    now = dt.datetime.now(dt.UTC)
    data = etl_status(reader, now)
    health, runs = data["etl_health"].iloc[0], data["etl_runs"]
    if runs.empty:
        st.info(t("status.no_runs"))
        _digests(tz)
        return
    if runs.iloc[0]["status"] == "failed":
        st.error(t("status.last_failed", error=runs.iloc[0]["error"]))
    cards = st.columns([1.2, 1, 1.5, 1.3])  # widths after the labels, so none is cut
    last_ok = health["last_ok_run"]
    ago = t("status.ago", age=fmt.age((now - last_ok).total_seconds())) if pd.notna(last_ok) else None
    cards[0].metric(
        t("status.last_ok"),
        ago or t("fresh.never"),
        help=fmt.timestamp(last_ok, tz) or t("fresh.never"),
    )
    cards[1].metric(
        t("status.runs_24h"),
        f"{int(health['runs_24h']):,}",
        delta=t("status.failed_n", n=int(health["failed_24h"])) if health["failed_24h"] else None,
        delta_color="inverse",
    )
    cards[2].metric(
        t("status.rows_24h"), fmt.compact(float(health["rows_written_24h"])), help=t("status.rows_24h.help")
    )
    noise = [int(health[f"dropped_{reason}_24h"]) for reason in ("master_key", "health_check", "by_rule")]
    cards[3].metric(
        t("status.noise_24h"),
        fmt.compact(float(sum(noise))),
        help=t(
            "status.noise_help",
            master_key=noise[0],
            health_check=noise[1],
            rule=noise[2],
        ),
    )
    if health["kept_noise_tagged_24h"]:
        st.warning(t("status.noise_tagged", n=int(health["kept_noise_tagged_24h"])))
    _sources(data["sources"], tz)
    _nodes(data["newest_by_node"], tz)
    _runs(runs, tz)
    _digests(tz)


def _sources(sources: pd.DataFrame, tz: str) -> None:
    st.subheader(t("status.sources"))
    table = sources.assign(
        source=sources["source"].fillna(t("status.no_source")),
        **{c: _localized(sources[c], tz) for c in ("cursor", "newest_request", "newest_ingested")},
    )
    columns = {
        "source": st.column_config.TextColumn(t("status.source")),
        "cursor_column": st.column_config.TextColumn(t("status.cursor_column")),
        "cursor": st.column_config.DatetimeColumn(t("status.cursor")),
        "newest_request": st.column_config.DatetimeColumn(t("status.newest_request")),
        "newest_ingested": st.column_config.DatetimeColumn(t("status.newest_ingested")),
    }
    times = {column: tables.when(tz) for column in ("cursor", "newest_request", "newest_ingested")}
    tables.show(tables.styled(table[list(columns)], times), columns)
    if sources["full_refresh_pending"].fillna(False).any():
        st.warning(t("status.refresh_pending"))


def _nodes(nodes: pd.DataFrame, tz: str) -> None:
    st.subheader(t("status.nodes"))
    table = nodes.assign(newest_request=_localized(nodes["newest_request"], tz))
    columns = {
        "node": st.column_config.TextColumn(t("status.node")),
        "newest_request": st.column_config.DatetimeColumn(t("status.newest_request")),
        "requests_24h": st.column_config.NumberColumn(t("status.requests_24h")),
        "failures_24h": st.column_config.NumberColumn(t("status.failures_24h")),
    }
    formats = {"newest_request": tables.when(tz), "requests_24h": fmt.count, "failures_24h": fmt.count}
    tables.show(tables.styled(table[list(columns)], formats), columns)


def _runs(runs: pd.DataFrame, tz: str) -> None:
    """The newest runs in two tables of the same rows, so each fits the page: what a run
    did, then what it left out and why."""
    st.subheader(t("status.runs"))
    table = runs.assign(
        started_at=_localized(runs["started_at"], tz),
        status=runs["status"].map(lambda s: t(f"status.run.{s}")),
        mode=runs["mode"].map(lambda m: t(f"status.mode.{m}")),
    )
    started = {"started_at": st.column_config.DatetimeColumn(t("status.started"))}
    did = started | {
        "status": st.column_config.TextColumn(t("status.status")),
        "mode": st.column_config.TextColumn(t("status.mode")),
        "seconds": st.column_config.NumberColumn(t("status.seconds")),
        "rows_read": st.column_config.NumberColumn(t("status.rows_read")),
        "rows_written": st.column_config.NumberColumn(t("status.rows_written")),
        "duplicates_skipped": st.column_config.NumberColumn(t("status.duplicates")),
        "error": st.column_config.TextColumn(t("status.error"), width="medium"),
    }
    left_out = started | {
        "dropped_master_key": st.column_config.NumberColumn(t("status.dropped_master_key")),
        "dropped_health_check": st.column_config.NumberColumn(t("status.dropped_health_check")),
        "dropped_by_rule": st.column_config.NumberColumn(t("status.dropped_by_rule")),
        "rows_malformed": st.column_config.NumberColumn(t("status.malformed")),
        "kept_noise_tagged": st.column_config.NumberColumn(t("status.kept_noise_tagged")),
    }
    formats: dict[str, tables.Formatter] = {"started_at": tables.when(tz), "seconds": fmt.seconds}
    formats |= {column: fmt.count for column in left_out if column not in formats}
    formats |= dict.fromkeys(("rows_read", "rows_written", "duplicates_skipped"), fmt.count)
    tables.show(tables.styled(table[list(did)], formats), did)
    st.caption(t("status.runs_note", limit=RECENT_RUNS, tz=tz))
    st.markdown(f"**{t('status.left_out')}**")
    tables.show(tables.styled(table[list(left_out)], formats), left_out)


def _localized(column: pd.Series, tz: str) -> pd.Series:
    return pd.to_datetime(column, utc=True).dt.tz_convert(tz)


def _digests(tz: str) -> None:
    """The weekly digest's outbox (dashboard/digest.py), when there is one: what was sent,
    and what waits for the next run, with why it failed."""
    try:
        rows = state_db.shared(state_db.state_url(os.environ)).digests(limit=8)
    except state_db.StateUnavailable:
        return
    if not rows:
        return
    st.subheader(t("status.digest"))
    waiting = [row for row in rows if row["sent"] is None]
    if waiting:
        st.warning(
            t(
                "status.digest_waiting",
                n=len(waiting),
                error=waiting[0]["last_error"] or t("status.digest_untried"),
            )
        )
    table = pd.DataFrame(
        {
            "week": [row["week"] for row in rows],
            "channel": [row["channel"] for row in rows],
            "sent": [pd.Timestamp(row["sent"], unit="s", tz="UTC") if row["sent"] else None for row in rows],
            "attempts": [row["attempts"] for row in rows],
            "last_error": [row["last_error"] for row in rows],
        }
    )
    columns = {
        name: st.column_config.Column(plain(f"status.digest.{name}"))
        for name in ("week", "channel", "sent", "attempts", "last_error")
    }
    tables.show(tables.styled(table, {"sent": tables.when(tz)}), columns)
