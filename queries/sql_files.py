"""The named SQL files of this folder: which there are, the text of one by its name,
the defaults of the parameters it reads, and which days' single requests it reads (so
that the reader loads no others)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

from settings.config import DashboardSettings

QUERY_DIR = Path(__file__).parent


class UnknownQuery(LookupError):
    pass


# a read of a view of single requests over the whole range (setup/views.sql)
_REQUEST_VIEWS = re.compile(r"\b(?:FROM|JOIN)\s+(?:in_scope|selected|scoped|overlapping|requests)\b", re.I)
# a read of the Nodes page's views (queries/serving.py)
_SERVING_VIEWS = re.compile(
    r"\b(?:flight_slots|failure_slots|serving_(?:perf|speed|levels|load|level_time|cache|bands|routing|quantiles))\b",
    re.I,
)
_COMMENT = re.compile(r"--[^\n]*")
_PARAMETER = re.compile(r"\$([a-z_]+)")
# how many names the breakdowns show, whom they always show, and (for the highlighted
# user's part of a page) which names the page shows: unless a caller says otherwise, the
# configuration's defaults, everyone ranked (setup/views.sql kept_names)
NAME_PARAMS: dict[str, Any] = {
    "top_names": DashboardSettings.top_names,
    "grid_names": DashboardSettings.grid_names,
    "filter_names": DashboardSettings.filter_names,
    "highlight": None,
    "shown": None,
}
Reads = Literal["all", "edges", "none"]


def days_read(sql: str, planned: Mapping[str, bool]) -> Reads:
    """Which days' single requests `sql` reads: of the whole window ("all": from a view
    of them, through the latency percentiles where the series may not answer, or through
    the Nodes page's views where its partials may not), only of the window's edges and
    the days before them (the Nodes page's views, the partials answering for the rest),
    or none."""
    sql = _COMMENT.sub("", sql)
    serving = bool(_SERVING_VIEWS.search(sql))
    if (
        _REQUEST_VIEWS.search(sql)
        or ("latency_quantile" in sql and not planned["series"])
        or (serving and not planned["nodes"])
    ):
        return "all"
    return "edges" if serving else "none"


def with_defaults(sql: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """`params` and, for those of NAME_PARAMS that `sql` reads and `params` lacks, their
    defaults (DuckDB takes no parameter a statement does not read)."""
    wanted = set(_PARAMETER.findall(_COMMENT.sub("", sql))) & NAME_PARAMS.keys()
    return {name: NAME_PARAMS[name] for name in wanted} | dict(params)


def query_names() -> list[str]:
    return sorted(p.stem for p in QUERY_DIR.glob("*.sql"))


@cache
def load_sql(name: str) -> str:
    if name not in query_names():  # names only: never a path to some other SQL file
        raise UnknownQuery(f"no query {name!r}; known: {', '.join(query_names())}")
    return (QUERY_DIR / f"{name}.sql").read_text(encoding="utf-8")
