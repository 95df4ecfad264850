"""The Nodes page's serving insight from real traffic (issue 18): whether prefix caching
works per model and node, how latency grows with prompt length, the load table of each
node (latency per level of concurrency, Locust-style) and how the proxy spreads load over
the main node and its backups. Layout only: the figures come from queries/pages.py
`nodes`, their charts from dashboard/figures/."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import figures, panels, tables
from dashboard import format as fmt
from dashboard.figures import Span
from dashboard.panels.plot import plot
from dashboard.strings import plain, t
from dashboard.untrusted import Markdown, short

BAND_MEASURES = ("ttft_p50_ms", "ttft_p95_ms", "latency_p50_ms", "latency_p95_ms")
NAME_CHARS = 10  # a highlighted user's name as a column header


@dataclass(frozen=True)
class Highlighted:
    """The highlighted user, and their part of the page's result sets (the names of
    pages.NODES_HIGHLIGHTED, over their requests only)."""

    who: str
    data: dict[str, pd.DataFrame]

    def beside(
        self,
        frame: pd.DataFrame,
        name: str,
        keys: list[str],
        columns: dict[str, Any],
        *,
        value: str = "requests",
        label: str = "nodes.mine",
    ) -> pd.DataFrame:
        """`frame` with their `value` of result set `name` on each row (matched on `keys`;
        a count is 0 where they had no request, a rate missing) as the column `mine_<value>`,
        which joins `columns` headed by their name (`label` says the rest on hover, as
        Markdown: t() escapes the name; the tables fill a 1280 px page without it)."""
        theirs = self.data[name][[*keys, value]]
        matched = frame[keys].merge(theirs, on=keys, how="left")[value]
        if value == "requests":
            matched = matched.fillna(0).astype("int64")
        column = f"mine_{value}"
        columns[column] = st.column_config.NumberColumn(
            short(self.who, NAME_CHARS), help=t(label, who=short(self.who)), width="small"
        )
        return frame.assign(**{column: matched.to_numpy()})


def prefix_cache(data: dict[str, pd.DataFrame], span: Span | None, highlighted: Highlighted | None) -> None:
    """The hit rate per node and model (and the highlighted user's own), flagged where
    repeated prompts got no cached token, and per model over time."""
    with st.container(border=True):
        st.markdown(f"**{t('serving.cache')}**", help=t("serving.cache.help"))
        pairs = data["prefix_cache"]
        if pairs.empty:
            st.caption(t("serving.none"))
            return
        table = pairs.assign(
            cache_hit_rate=pairs["cache_hit_rate"].astype("float64"),
            note=[
                t("serving.cache.uncached_repeats")
                if repeats
                else (t("serving.cache.not_reported") if not reported else "")
                for repeats, reported in zip(pairs["uncached_repeats"], pairs["cache_reported"], strict=True)
            ],
        )
        table = _with_pair(table)
        columns = {  # node and model in one column, as in the bands' table: it fits 1280 px
            "pair": st.column_config.TextColumn(t("col.node_model")),
            "requests": st.column_config.NumberColumn(t("col.requests")),
            "prompt_tokens": st.column_config.NumberColumn(t("col.prompt_tokens")),
            "cached_tokens": st.column_config.NumberColumn(t("col.cached_tokens")),
            "cache_hit_rate": st.column_config.NumberColumn(t("col.cache_hit_rate")),
            "note": st.column_config.TextColumn(t("col.note")),
        }
        formats: dict[str, tables.Formatter] = {
            "requests": fmt.count,
            "prompt_tokens": fmt.count,
            "cached_tokens": fmt.count,
            "cache_hit_rate": fmt.percent,
            "mine_cache_hit_rate": fmt.percent,
        }
        if highlighted is not None:
            # their hit rate, in place of the prompt tokens (the rate's and the cached
            # tokens' other term): a column more was wider than the page at 1280 px
            del columns["prompt_tokens"]
            table = highlighted.beside(
                table,
                "prefix_cache",
                ["node", "model"],
                columns,
                value="cache_hit_rate",
                label="serving.cache.mine",
            )
        # a pair without a rate shows the table's dash; its note says why ("none reported")
        tables.show(tables.styled(table[list(columns)], formats), columns)
        if pairs["uncached_repeats"].any():
            st.warning(t("serving.cache.flagged"))
        unreported = sorted({str(m) for m in pairs.loc[~pairs["cache_reported"], "model"]})
        if unreported:
            st.caption(t("serving.cache.left_out", models=", ".join(unreported)))
        by_model = _rate_by_model(data["prefix_cache_by_bucket"])
        figure = figures.node_lines(
            by_model,
            "cache_hit_rate",
            t("axis.cache_hit_rate"),
            span=span,
            series="model",
            width=figures.WIDE_PLOT_WIDTH,
        )
        plot(figure, key="prefix_cache")


def _with_pair(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with `pair`, its node and model in one text ("blackwell · gpt-oss-120b"):
    one column where two made the tables wider than the page at 1280 px."""
    return frame.assign(pair=frame["node"].astype(str) + " · " + frame["model"].astype(str))


def _rate_by_model(buckets: pd.DataFrame) -> pd.DataFrame:
    """Each model's hit rate per bucket over the nodes that report cached tokens (a node
    that reports none would pull the rate to 0 without saying anything about caching);
    a bucket without prompt tokens is a gap."""
    reported = buckets[buckets.groupby(["node", "model"])["cached_tokens"].transform("sum").gt(0)]
    if reported.empty:
        return pd.DataFrame(columns=["bucket", "model", "cache_hit_rate"])
    sums = reported.groupby(["bucket", "model"], as_index=False)[["prompt_tokens", "cached_tokens"]].sum()
    prompt = sums["prompt_tokens"].where(sums["prompt_tokens"] > 0)
    return sums.assign(cache_hit_rate=sums["cached_tokens"] / prompt)


def prompt_bands(data: dict[str, pd.DataFrame], highlighted: Highlighted | None) -> None:
    """Time to first token and latency per band of prompt length, a line per node and
    model: the long-prompt cliff (and the highlighted user's own values)."""
    with st.container(border=True):
        st.markdown(f"**{t('serving.bands')}**", help=t("serving.bands.help"))
        bands = data["prompt_bands"]
        if bands.empty:
            st.caption(t("serving.none"))
            return
        measure = st.radio(
            t("serving.bands.measure"),
            BAND_MEASURES,
            format_func=lambda column: t(f"col.{column}"),
            horizontal=True,
            key="band_measure",
            label_visibility="collapsed",
        )
        lines = _with_pair(bands)
        # the highlighted user's own values per band as accent dots, named by node · model
        # (a column more in the table was wider than the page at 1280 px)
        mine, who = None, None
        if highlighted is not None:
            mine, who = _with_pair(highlighted.data["prompt_bands"]), highlighted.who
            mine = mine.assign(node=mine["pair"])  # what the dots' hover names
        figure = figures.node_lines(
            lines,
            measure,
            t(f"col.{measure}"),
            mine,
            who,
            x="band",
            series="pair",
            width=figures.WIDE_PLOT_WIDTH,
        )
        plot(figure, key="prompt_bands")
        # node and model in one column: nine columns were 4 px wider than the page at 1280 px
        columns = {
            "band": st.column_config.TextColumn(t("col.band")),
            "pair": st.column_config.TextColumn(t("col.node_model")),
            "requests": st.column_config.NumberColumn(t("col.requests")),
            **{c: st.column_config.NumberColumn(t(f"col.{c}")) for c in BAND_MEASURES},
            "output_tps_p50": st.column_config.NumberColumn(t("col.output_tps_p50")),
        }
        formats: dict[str, tables.Formatter] = dict.fromkeys(BAND_MEASURES, fmt.duration_ms)
        formats |= {"requests": fmt.count, "output_tps_p50": fmt.rate}
        tables.show(tables.styled(lines[list(columns)], formats), columns)


LOAD_COLUMNS = (
    "in_flight",
    "requests",
    "latency_avg_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "ttft_p95_ms",
    "failure_rate",
    "requests_per_s",
    "within_target",
)


def load_table(
    data: dict[str, pd.DataFrame],
    target_ms: float,
    highlighted: Highlighted | None,
    worst_first: list[str] | None = None,
    file_name: str = "load_table.csv",
) -> None:
    """Per node (and model), each level of concurrency with its latency, failures and
    throughput (and the highlighted user's requests at it), each level's p95 against the
    target by the measure it is judged on (load_table.sql `judged_on`), the stable
    concurrency named; all of it as CSV. It opens on the first node of `worst_first`
    (the nodes in trouble, the worst first) that it has rows for, else on the busiest."""
    target = fmt.duration_ms(target_ms)
    with st.container(border=True):
        st.markdown(f"**{t('serving.load')}**", help=t("serving.load.help", target=target))
        load = data["load_table"]
        if load.empty:
            st.caption(t("serving.none"))
            return
        nodes = list(dict.fromkeys(load["node"]))
        rank = {node: index for index, node in enumerate(worst_first or [])}
        nodes.sort(key=lambda node: rank.get(node, len(rank)))
        left, right = st.columns(2)
        node = left.selectbox(t("col.node"), nodes, key="load_node")
        here = load[load["node"] == node]
        models = [m for m in dict.fromkeys(here["model"]) if not fmt.missing(m)]
        everything = t("serving.load.all_models")
        model = right.selectbox(t("col.model"), [everything, *models], key="load_model")
        rows = here[here["model"].isna()] if model == everything else here[here["model"] == model]
        st.markdown(_stable_sentence(rows, target))
        st.caption(t("serving.load.judged", target=target))
        shown = rows.assign(
            within_target=[
                _judgement(ok, on) for ok, on in zip(rows["within_target"], rows["judged_on"], strict=True)
            ]
        )
        columns = {c: st.column_config.NumberColumn(t(f"col.{c}")) for c in LOAD_COLUMNS}
        columns["within_target"] = st.column_config.TextColumn(plain("col.within_target", target=target))
        formats: dict[str, tables.Formatter] = {
            "in_flight": fmt.count,
            "requests": fmt.count,
            "latency_avg_ms": fmt.duration_ms,
            "latency_p50_ms": fmt.duration_ms,
            "latency_p95_ms": fmt.duration_ms,
            "ttft_p95_ms": fmt.duration_ms,
            "failure_rate": fmt.percent,
            "requests_per_s": _per_second,
            "mine_requests": fmt.count,
        }
        if highlighted is not None:
            shown = highlighted.beside(shown, "load_table", ["node", "model", "in_flight"], columns)
        tables.show(tables.styled(shown[list(columns)], formats), columns)
        st.download_button(
            t("serving.load.download"),
            panels.csv_bytes(load),
            file_name=file_name,
            mime="text/csv",
            key="download_load_table",
            on_click="ignore",
        )


def _stable_sentence(rows: pd.DataFrame, target: str) -> str:
    """The stable concurrency of `rows` (one node, or one node and model, by level) and
    the measures it was judged on; where there is none, how far over the lowest level is."""
    judged = rows[rows["judged_p95_ms"].notna()]
    stable = rows["stable_level"].dropna()
    if not stable.empty:
        level = int(stable.iloc[0])
        used = dict.fromkeys(judged.loc[judged["in_flight"] <= level, "judged_on"])
        measures = t("serving.load.and").join(t(f"serving.load.measure.{m}") for m in used)
        return t("serving.load.stable", level=level, measures=Markdown(measures), target=target)
    if judged.empty:
        return t("serving.none")
    lowest = judged.iloc[0]  # rows come by level: the lowest, already over
    return t(
        "serving.load.none_stable",
        target=target,
        measure=t(f"serving.load.measure.{lowest['judged_on']}"),
        value=fmt.duration_ms(lowest["judged_p95_ms"]),
        level=int(lowest["in_flight"]),
    )


def _judgement(within: Any, judged_on: Any) -> str:
    """A level's p95 against the target, and by which measure: "yes (TTFT)", "over (latency)"."""
    if fmt.missing(within):
        return ""
    measure = plain(f"serving.load.short.{judged_on}")
    return plain("serving.load.ok" if within else "serving.load.over", measure=measure)


def _per_second(value: Any) -> str:
    return fmt.MISSING if fmt.missing(value) else t("unit.per_s", value=f"{float(value):,.2f}")


ROUTING_COUNTS = ("requests", "routing_known", "fallback_requests", "retried_requests", "retries")


def routing(data: dict[str, pd.DataFrame], span: Span | None, highlighted: Highlighted | None) -> None:
    """Each node's share of the requests over time, its troubled buckets marked; the
    router's fallbacks and retries per node and model (and the highlighted user's
    requests there); LiteLLM's own time per node."""
    with st.container(border=True):
        st.markdown(f"**{t('serving.routing')}**", help=t("serving.routing.help"))
        plot(
            figures.node_shares(data["node_share_by_bucket"], span, figures.WIDE_PLOT_WIDTH),
            key="node_shares",
        )
        routed = data["routing"]
        if routed.empty:
            st.caption(t("serving.none"))
            return
        per_model = routed[routed["model"].notna()]
        columns = {
            "node": st.column_config.TextColumn(t("col.node")),
            "model": st.column_config.TextColumn(t("col.model")),
            **{c: st.column_config.NumberColumn(t(f"col.{c}")) for c in ROUTING_COUNTS},
            "fell_back_from": st.column_config.TextColumn(t("col.fell_back_from")),
        }
        counts: dict[str, tables.Formatter] = dict.fromkeys((*ROUTING_COUNTS, "mine_requests"), fmt.count)
        if highlighted is not None:
            per_model = highlighted.beside(per_model, "routing", ["node", "model"], columns)
        tables.show(tables.styled(per_model[list(columns)], counts), columns)
        if not routed["routing_known"].any():
            st.caption(t("serving.routing.unknown"))
        st.markdown(f"**{t('serving.overhead')}**", help=t("serving.overhead.help"))
        per_node = routed[routed["model"].isna()]
        overhead = {
            "node": st.column_config.TextColumn(t("col.node")),
            "requests": st.column_config.NumberColumn(t("col.requests")),
            "overhead_p50_ms": st.column_config.NumberColumn(t("col.overhead_p50_ms")),
            "overhead_p95_ms": st.column_config.NumberColumn(t("col.overhead_p95_ms")),
        }
        times: dict[str, tables.Formatter] = {
            "requests": fmt.count,
            "overhead_p50_ms": fmt.duration_ms,
            "overhead_p95_ms": fmt.duration_ms,
        }
        tables.show(tables.styled(per_node[list(overhead)], times), overhead)
