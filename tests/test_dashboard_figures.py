"""Every figure builder: the data it draws, the highlight's colours, and empty input.

One module because these are the tests of one public face, dashboard.figures, whose
builders share the data fixtures and the highlight checks at the top.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from dashboard import figures, preload
from dashboard import format as fmt
from dashboard.strings import Language, use_language
from queries.runner import StoreReader
from tests import known_store
from tests.known_store import KST_NOV_21
from tests.plotly_json import figure


@pytest.fixture(scope="module")
def reader(tmp_path_factory: pytest.TempPathFactory) -> StoreReader:
    return StoreReader(known_store.build(tmp_path_factory.mktemp("figures") / "store"))


@pytest.fixture(scope="module")
def data(reader: StoreReader) -> dict[str, pd.DataFrame]:
    names = ("by_bucket", "by_node", "by_user", "by_client", "by_model", "user_client_matrix")
    return {name: reader.run(name, KST_NOV_21) for name in names}


@pytest.fixture(scope="module")
def bob(reader: StoreReader) -> dict[str, pd.DataFrame]:
    from dataclasses import replace

    mine = replace(KST_NOV_21, users=("bob",))
    return {name: reader.run(name, mine) for name in ("by_bucket", "by_node", "by_client", "by_model")}


def valid(fig: Any) -> Any:
    """The figure as Plotly reads it back from what the browser gets, checked property by
    property: the builders write plain dicts, which Plotly does not check as they build."""
    return go.Figure(figure(pio.to_json(fig.to_dict(), validate=False)))


def traces(fig: Any) -> list[Any]:
    return list(valid(fig).data)


def values(array: Any) -> list[Any]:
    return [v.item() if hasattr(v, "item") else v for v in array]


def test_tokens_over_time_stacks_the_four_kinds(data: dict[str, pd.DataFrame]) -> None:
    fig = figures.tokens_over_time(data["by_bucket"])
    bars = traces(fig)
    assert [b.name for b in bars] == ["Uncached prompt", "Cached prompt", "Answer", "Reasoning"]
    assert fig.layout.barmode == "stack"
    at_midnight = [values(b.y)[0] for b in bars]  # 00:00 KST holds b1
    assert at_midnight == [1000, 1000, 400, 0] and sum(at_midnight) == 2400
    assert all(b.opacity in (None, 1) for b in bars)


def test_tokens_over_time_highlight_dims_the_lab_and_draws_the_person(
    data: dict[str, pd.DataFrame], bob: dict[str, pd.DataFrame]
) -> None:
    fig = figures.tokens_over_time(data["by_bucket"], bob["by_bucket"], "bob")
    *kinds, line = traces(fig)
    assert all(k.opacity == figures.DIMMED for k in kinds)
    assert line.name == "bob" and line.line.color == figures.ACCENT
    assert sum(values(line.y)) == 2549


def test_requests_over_time_successes_failures_and_highlight(
    data: dict[str, pd.DataFrame], bob: dict[str, pd.DataFrame]
) -> None:
    plain = traces(figures.requests_over_time(data["by_bucket"]))
    assert [t.name for t in plain] == ["Succeeded", "Failed"]
    assert (sum(values(plain[0].y)), sum(values(plain[1].y))) == (2, 1)
    assert plain[1].marker.color == figures.FAILURE
    lit = traces(figures.requests_over_time(data["by_bucket"], bob["by_bucket"], "bob"))
    assert lit[-1].name == "bob" and sum(values(lit[-1].y)) == 2


def test_cache_trend_shows_the_split_and_the_rate(
    data: dict[str, pd.DataFrame], bob: dict[str, pd.DataFrame]
) -> None:
    plain = traces(figures.cache_trend(data["by_bucket"]))
    assert [t.name for t in plain] == ["Cached", "Uncached", "Cache hit rate"]
    rates = [r for r in values(plain[2].y) if r is not None]  # a bucket without a prompt: a gap
    assert rates[0] == pytest.approx(0.5)
    lit = traces(figures.cache_trend(data["by_bucket"], bob["by_bucket"], "bob"))
    assert lit[-1].name == "Cache hit rate (bob)" and lit[-1].line.color == figures.ACCENT


def test_share_bars_label_shares_and_stack_the_highlight(
    data: dict[str, pd.DataFrame], bob: dict[str, pd.DataFrame]
) -> None:
    plain = traces(figures.share_bars(data["by_node"], "node", ("requests", "tokens")))
    assert len(plain) == 2  # one bar trace per measure
    requests = plain[0]
    assert list(requests.y) == ["unknown", "l40-a", "blackwell"]  # ties by name, the first on top
    assert list(requests.text) == ["33.3 %", "33.3 %", "33.3 %"]
    assert list(plain[1].text) == ["0.0 %", "51.5 %", "48.5 %"]  # tokens: 2549 and 2400 of 4949
    lit = traces(figures.share_bars(data["by_node"], "node", ("requests", "tokens"), bob["by_node"], "bob"))
    mine, rest = lit[0], lit[1]
    assert mine.marker.color == figures.ACCENT and mine.name == "bob"
    assert values(mine.x) == [1, 1, 0]  # bob: the failed request (unknown) and l40-a
    assert values(rest.x) == [0, 0, 1]
    assert rest.marker.color == figures._dim(figures.BASE)


def test_user_bars_colour_only_the_highlighted_user(data: dict[str, pd.DataFrame]) -> None:
    plain = traces(figures.user_bars(data["by_user"], "requests"))[0]
    assert list(plain.y) == ["alice", "bob"]  # largest on top (the last row)
    assert list(plain.customdata) == ["alice", "bob"]
    assert set(plain.marker.color) == {figures.BASE}
    assert list(plain.text)[1].endswith("66.7 %")
    lit = traces(figures.user_bars(data["by_user"], "requests", "bob"))[0]
    assert list(lit.marker.color) == [figures._dim(figures.BASE), figures.ACCENT]
    spend = traces(figures.user_bars(data["by_user"], "spend"))[0]
    assert list(spend.y) == ["bob", "alice"] and list(spend.text)[1].startswith("$0.02 ")


def test_client_matrix_outlines_the_highlighted_row(data: dict[str, pd.DataFrame]) -> None:
    plain = figures.client_matrix(data["user_client_matrix"])
    heat = traces(plain)[0]
    assert list(heat.y) == ["bob", "alice"] and list(heat.x) == [
        "Claude Code",
        "Python HTTP",
        "unknown",
    ]
    # a client a person never used: a blank cell (None), not the scale's palest colour
    assert [list(row) for row in heat.z] == [[None, 1, 1], [1, None, None]]
    assert heat.hoverongaps is False
    # the columns in the Clients chart's order (most requests first), not alphabetical
    busiest = figures.client_matrix(
        data["user_client_matrix"], clients=["unknown", "Python HTTP", "Claude Code"]
    )
    assert list(traces(busiest)[0].x) == ["unknown", "Python HTTP", "Claude Code"]
    # a cell's hover: its requests, tokens and spend (the user x client view's cost)
    alice = data["user_client_matrix"].query("user == 'alice' and client == 'Claude Code'")
    tokens, spend = float(alice["total_tokens"].sum()), float(alice["spend_usd"].sum())
    cells = {
        (y, x): cell
        for y, row in zip(heat.y, heat.customdata, strict=True)
        for x, cell in zip(heat.x, row, strict=True)
    }
    assert cells[("alice", "Claude Code")] == (
        f"Requests 1 · tokens {fmt.compact(tokens)} · spend {fmt.usd(spend)}"
    )
    assert cells[("bob", "Claude Code")] == "no requests"
    assert not plain.layout.shapes
    lit = figures.client_matrix(data["user_client_matrix"], "alice")
    (outline,) = lit.layout.shapes
    assert outline.line.color == figures.ACCENT and (outline.y0, outline.y1) == (0.5, 1.5)


def test_sparkline_values(data: dict[str, pd.DataFrame]) -> None:
    assert len(figures.sparkline(data["by_bucket"], "requests")) == 24
    assert sum(figures.sparkline(data["by_bucket"], "requests")) == 3
    assert figures.sparkline(data["by_bucket"], "success_rate") == [1.0, 0.0, 1.0]  # only hours with requests


@pytest.mark.parametrize(
    "build",
    [
        lambda d: figures.tokens_over_time(d["by_bucket"]),
        lambda d: figures.requests_over_time(d["by_bucket"]),
        lambda d: figures.cache_trend(d["by_bucket"]),
        lambda d: figures.share_bars(d["by_node"], "node", ("requests", "tokens")),
        lambda d: figures.user_bars(d["by_user"], "spend", "anyone"),
        lambda d: figures.client_matrix(d["user_client_matrix"]),
    ],
)
def test_empty_input_draws_a_notice_not_an_error(build: object, reader: StoreReader, tmp_path: Path) -> None:
    from dataclasses import replace

    nothing = replace(KST_NOV_21, users=("nobody",))
    empty = {
        name: reader.run(name, nothing)
        for name in ("by_bucket", "by_node", "by_user", "by_client", "by_model", "user_client_matrix")
    }
    fig = build(empty)  # type: ignore[operator]
    notes = [a.text for a in fig.layout.annotations]
    assert "No requests in this range and selection." in notes
    assert figures.sparkline(pd.DataFrame(), "requests") == []


def test_node_lines_draw_one_line_per_node_and_the_highlight_as_dots() -> None:
    frame = pd.DataFrame(
        {
            "bucket": pd.to_datetime(["2026-11-20 10:00", "2026-11-20 11:00", "2026-11-20 10:00"]),
            "node": ["l40-a", "l40-a", "blackwell"],
            "output_tps_p50": [40.0, 42.0, 110.0],
        }
    )
    plain = traces(figures.node_lines(frame, "output_tps_p50", "Tokens/s"))
    assert [t.name for t in plain] == ["blackwell", "l40-a"]
    assert values(plain[1].y) == [40.0, 42.0]
    colours = figures.node_colors(["l40-a", "blackwell"])
    assert plain[0].line.color == colours["blackwell"] != colours["l40-a"]
    mine = frame.iloc[[0]]
    lit = traces(figures.node_lines(frame, "output_tps_p50", "Tokens/s", mine, "tomas"))
    assert lit[-1].name == "tomas" and lit[-1].marker.color == figures.ACCENT and values(lit[-1].y) == [40.0]
    assert all(t.opacity < 1 for t in lit[:-1])
    empty = figures.node_lines(frame.iloc[0:0], "output_tps_p50", "Tokens/s")
    assert [a.text for a in empty.layout.annotations] == ["No requests in this range and selection."]


def test_a_range_ending_now_draws_its_last_bucket_whole_and_shades_what_is_to_come() -> None:
    """Today's point sits at midday: an axis ending at 03:15 left it, and the line to it,
    off the chart (the walk-through saw lines leave at the right edge)."""
    days = pd.DataFrame(
        {
            "bucket": pd.to_datetime(["2026-12-04", "2026-12-05", "2026-12-06"]),
            "node": ["l40-a"] * 3,
            "output_tps_p50": [40.0, 42.0, 41.0],
        }
    )
    now = figures.Span("2026-11-30 00:00:00", "2026-12-06 03:15:00", "day")
    layout = figures.node_lines(days, "output_tps_p50", "Tokens/s", span=now).layout
    assert list(layout.xaxis.range) == ["2026-11-30 00:00:00", "2026-12-07 00:00:00"]
    assert [(s.x0, s.x1) for s in layout.shapes] == [("2026-12-06 03:15:00", "2026-12-07 00:00:00")]
    assert [s.label.text for s in layout.shapes] == ["today so far"]  # labelled, not only shaded
    hours = figures.Span("2026-12-05 03:00:00", "2026-12-06 03:15:00", "hour")
    layout = figures.node_lines(days, "output_tps_p50", "Tokens/s", span=hours).layout
    assert [s.label.text for s in layout.shapes] == ["this hour so far"]
    whole = figures.Span("2026-11-30 00:00:00", "2026-12-06 00:00:00", "day")
    layout = figures.node_lines(days.iloc[:2], "output_tps_p50", "Tokens/s", span=whole).layout
    assert list(layout.xaxis.range) == ["2026-11-30 00:00:00", "2026-12-06 00:00:00"] and not layout.shapes


def test_a_cards_sparkline_leaves_out_todays_bucket_so_far() -> None:
    """Today's bucket holds the morning's requests only: drawn, every card's line fell at
    its end, as if usage had collapsed."""
    buckets = pd.DataFrame({"requests": [120, 130, 125, 9], "latency_p50_ms": [900.0, None, 950.0, 800.0]})
    assert figures.sparkline(buckets, "requests", unfinished=True) == [120, 130, 125]
    assert figures.sparkline(buckets, "requests") == [120, 130, 125, 9]
    assert figures.sparkline(buckets, "latency_p50_ms", unfinished=True) == [900.0, 950.0]


def test_failures_stack_by_error_class() -> None:
    frame = pd.DataFrame(
        {
            "bucket": pd.to_datetime(["2026-11-20 10:00", "2026-11-20 10:00", "2026-11-20 11:00"]),
            "node": ["l40-a", "unknown", "l40-a"],
            "error_class": ["InternalServerError", "ProxyModelNotFoundError", "InternalServerError"],
            "failures": [3, 1, 2],
        }
    )
    bars = traces(figures.failures_over_time(frame))
    assert [b.name for b in bars] == ["InternalServerError", "ProxyModelNotFoundError"]
    assert values(bars[0].y) == [3, 2] and list(bars[1].customdata) == ["unknown"]
    assert figures.failures_over_time(frame.iloc[0:0]).layout.annotations


def test_the_stores_unknown_is_a_word_of_the_page_in_each_language() -> None:
    """A request with no node or model: LiteLLM's "unknown-model", the store's "unknown";
    the Korean page wrote them in English."""
    frame = pd.DataFrame(
        {
            "band": ["0-500", "0-500"],
            "model": ["unknown-model", "gpt-oss-120b"],
            "node": ["unknown", "blackwell"],
            "ttft_p50_ms": [20.0, 200.0],
        }
    )
    english = traces(figures.node_lines(frame, "ttft_p50_ms", "TTFT", x="band"))
    with use_language("ko"):
        korean = traces(figures.node_lines(frame, "ttft_p50_ms", "TTFT", x="band"))
        models = traces(figures.node_lines(frame, "ttft_p50_ms", "TTFT", x="band", series="model"))
    assert [t.name for t in english] == ["blackwell", "unknown"]
    assert [t.name for t in korean] == ["blackwell", "알 수 없음"]
    assert [t.name for t in models] == ["gpt-oss-120b", "알 수 없는 모델"]


def test_in_korean_the_names_hover_texts_and_date_axes_are_korean(
    data: dict[str, pd.DataFrame], bob: dict[str, pd.DataFrame]
) -> None:
    english = figures.tokens_over_time(data["by_bucket"])
    english_stops = {tuple(s["dtickrange"]): s["value"] for s in english.layout.xaxis.tickformatstops}
    assert english_stops[(86_400_000, "M1")] == "%b %-d"  # Dec 3: month and day, no 00:00
    with use_language("ko"):
        fig = figures.tokens_over_time(data["by_bucket"], bob["by_bucket"], "bob")
        requests = figures.requests_over_time(data["by_bucket"])
        cache = figures.cache_trend(data["by_bucket"])
        empty = figures.user_bars(data["by_user"].iloc[0:0], "spend")
    *kinds, line = traces(fig)
    assert [k.name for k in kinds] == ["캐시 안 된 프롬프트", "캐시된 프롬프트", "답변", "추론"]
    assert kinds[0].hovertemplate == "%{y:,} 토큰<extra>%{fullData.name}</extra>"
    assert line.hovertemplate == "%{y:,} 토큰<extra>%{fullData.name}</extra>" and line.name == "bob"
    stops = {tuple(s.dtickrange): s.value for s in fig.layout.xaxis.tickformatstops}
    assert stops[(86_400_000, "M1")] == "%-m월 %-d일" and stops[(None, 86_399_999)] == "%-d일 %H:%M"
    assert fig.layout.xaxis.hoverformat == "%Y년 %-m월 %-d일 %H:%M"  # hourly buckets
    assert fig.layout.yaxis.title.text == "토큰"
    assert [t.name for t in traces(requests)] == ["성공", "실패"]
    assert [t.name for t in traces(cache)] == ["캐시됨", "캐시 안 됨", "캐시 적중률"]
    assert cache.layout.xaxis.tickformatstops
    assert [a.text for a in empty.layout.annotations] == ["이 기간과 조건에 해당하는 요청이 없습니다."]


def test_in_korean_daily_buckets_hover_as_days_and_failures_name_the_node() -> None:
    frame = pd.DataFrame(
        {
            "bucket": pd.to_datetime(["2026-11-20", "2026-11-21", "2026-11-21"]),
            "node": ["l40-a", "l40-a", "blackwell"],
            "error_class": ["InternalServerError", "unknown", "InternalServerError"],
            "failures": [3, 1, 2],
            "output_tps_p50": [40.0, 42.0, 110.0],
        }
    )
    with use_language("ko"):
        failures = figures.failures_over_time(frame)
        lines = figures.node_lines(frame, "output_tps_p50", "토큰/초")
        by_load = figures.node_lines(
            frame.assign(in_flight=[1, 2, 1]), "output_tps_p50", "토큰/초", x="in_flight"
        )
    assert [b.name for b in traces(failures)] == ["InternalServerError", "알 수 없음"]
    assert traces(failures)[0].hovertemplate == "%{customdata}에서 %{y:,}건<extra>%{fullData.name}</extra>"
    assert failures.layout.xaxis.hoverformat == lines.layout.xaxis.hoverformat == "%Y년 %-m월 %-d일"
    assert by_load.layout.xaxis.tickformatstops == ()  # not a date axis


MODEL_MEASURES = ("requests", "tokens", "spend")


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("who", [None, "bob"])
def test_every_figure_is_valid_plotly(
    data: dict[str, pd.DataFrame],
    bob: dict[str, pd.DataFrame],
    reader: StoreReader,
    who: str | None,
    language: Language,
) -> None:
    """A misspelt property would draw nothing in the browser, without an error anywhere."""
    mine = bob if who else {}
    nodes = {
        name: reader.run(name, KST_NOV_21)
        for name in (
            "concurrency",
            "latency_by_concurrency",
            "node_speed_by_bucket",
            "failures_by_bucket",
            "node_share_by_bucket",
            "prefix_cache_by_bucket",
        )
    }
    nodes["prompt_bands"] = reader.run("prompt_bands", KST_NOV_21, edges=[500, 2000])
    with use_language(language):
        built = [
            figures.tokens_over_time(data["by_bucket"], mine.get("by_bucket"), who),
            figures.requests_over_time(data["by_bucket"], mine.get("by_bucket"), who),
            figures.cache_trend(data["by_bucket"], mine.get("by_bucket"), who),
            figures.share_bars(data["by_node"], "node", ("requests", "tokens"), mine.get("by_node"), who),
            figures.share_bars(
                data["by_model"], "model", ("requests", "tokens", "spend"), mine.get("by_model"), who
            ),
            *(figures.user_bars(data["by_user"], by, who) for by in ("spend", "tokens", "requests")),
            figures.client_matrix(data["user_client_matrix"], who),
            figures.node_lines(nodes["concurrency"], "peak_in_flight", "In flight"),
            figures.node_lines(nodes["latency_by_concurrency"], "latency_p50_ms", "ms", x="in_flight"),
            figures.node_lines(nodes["node_speed_by_bucket"], "output_tps_p50", "tps"),
            figures.failures_over_time(nodes["failures_by_bucket"]),
            figures.node_shares(nodes["node_share_by_bucket"]),
            figures.node_lines(nodes["prompt_bands"], "ttft_p50_ms", "TTFT", x="band", series="model"),
            figures.node_lines(nodes["prefix_cache_by_bucket"], "cache_hit_rate", "Hit rate", series="model"),
            figures.tokens_over_time(data["by_bucket"].iloc[0:0]),
        ]
    for fig in built:
        checked = valid(fig)  # raises on any property Plotly does not know
        assert checked.data or checked.layout.annotations  # something drawn, or the notice


# --- names from the data: escaped, shortened, direction-neutral, kept apart -------------------

HTML_NAME = '<a href="https://evil.example/a">x</a><b>b</b><br>'
LONG = "L" * 60
TWINS = (LONG + "-first" + "x" * 100_000, LONG + "-second")  # alike when shortened
BIDI_NAME = "\u202eevil\u2066\u200f\u061cname"
NAMES = (HTML_NAME, *TWINS, BIDI_NAME)


def shown(fig: Any) -> list[str]:
    """Every text of the figure that Plotly renders as its pseudo-HTML: tick labels, trace
    names, hover texts, bar texts, annotations, and customdata a hover template shows."""
    spec = valid(fig).to_plotly_json()
    out: list[str] = []
    for name, axis in spec["layout"].items():
        if name.startswith(("xaxis", "yaxis")):
            out += [str(v) for v in axis.get("ticktext", [])]
    out += [str(a.get("text", "")) for a in spec["layout"].get("annotations", [])]
    for trace in spec["data"]:
        out.append(str(trace.get("name", "")))
        for field in ("hovertext", "text"):
            value = trace.get(field)
            out += [str(v) for v in np.ravel(np.asarray(value, dtype=object))] if value is not None else []
        if "%{customdata}" in trace.get("hovertemplate", ""):
            out += [str(v) for v in trace.get("customdata", [])]
    return out


def assert_inert(fig: Any) -> None:
    texts = shown(fig)
    for text in texts:
        assert "<a" not in text and "<b>" not in text and "<br>" not in text, text[:200]
        assert not any(
            c in text for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
        )
    ticks = [t for t in texts if t.endswith("…") or "&lt;" in t]
    assert ticks, "the names are shown"


def test_user_bars_show_names_inert_and_short_and_select_the_real_user(
    data: dict[str, pd.DataFrame],
) -> None:
    users = pd.concat([data["by_user"]] * 2, ignore_index=True).iloc[:4].assign(user=list(NAMES))
    fig = figures.user_bars(users, "requests")
    assert_inert(fig)
    bars = traces(fig)[0]
    assert sorted(bars.customdata) == sorted(NAMES)  # what a click selects: the real identity
    axis = valid(fig).layout.yaxis
    assert len(set(axis.tickvals)) == 4 and list(axis.tickvals) == list(bars.y)  # the twins: two bars
    assert all(len(html.unescape(label)) <= 40 for label in axis.ticktext)  # as Plotly shows them
    twins = [label for value, label in zip(axis.tickvals, axis.ticktext, strict=True) if value in TWINS]
    assert twins == [LONG[:39] + "…"] * 2
    names = [text.split(" · ")[0] for text in bars.hovertext]  # "name · Requests: 1,234"
    assert '&lt;a href="https://evil.example/a"&gt;x&lt;/a&gt;&lt;b&gt;b&lt;/b&gt;&lt;br&gt;' in names
    assert TWINS[0] in names  # the whole name in the tooltip
    assert "evilname" in "".join(axis.ticktext)


def test_category_charts_show_names_inert(
    data: dict[str, pd.DataFrame], bob: dict[str, pd.DataFrame]
) -> None:
    clients = data["by_client"].assign(client=list(NAMES[: len(data["by_client"])]))
    assert_inert(figures.share_bars(clients, "client", ("requests", "tokens")))
    mine = bob["by_client"].assign(client=list(NAMES[: len(bob["by_client"])]))
    lit = figures.share_bars(clients, "client", ("requests", "tokens"), mine, HTML_NAME)
    assert_inert(lit)
    matrix = data["user_client_matrix"]
    renamed = matrix.assign(
        user=matrix["user"].map({"alice": HTML_NAME, "bob": BIDI_NAME}),
        client=matrix["client"].map(dict(zip(sorted(set(matrix["client"])), NAMES[1:], strict=False))),
    )
    assert_inert(figures.client_matrix(renamed, HTML_NAME))
    assert figures.client_matrix(renamed, HTML_NAME).layout.shapes  # the highlight finds the real name


def test_time_and_node_charts_name_people_and_nodes_inert(
    data: dict[str, pd.DataFrame], bob: dict[str, pd.DataFrame]
) -> None:
    for builder in (figures.tokens_over_time, figures.requests_over_time, figures.cache_trend):
        fig = builder(data["by_bucket"], bob["by_bucket"], HTML_NAME)
        assert "&lt;a href" in "".join(shown(fig)) and all("<a" not in t for t in shown(fig))
    frame = pd.DataFrame(
        {
            "bucket": pd.to_datetime(["2026-11-20 10:00", "2026-11-20 11:00"]),
            "node": [HTML_NAME, BIDI_NAME],
            "error_class": [HTML_NAME, TWINS[0]],
            "failures": [1, 2],
            "output_tps_p50": [40.0, 42.0],
        }
    )
    assert_inert(figures.node_lines(frame, "output_tps_p50", "Tokens/s", frame.iloc[[0]], BIDI_NAME))
    assert_inert(figures.failures_over_time(frame))


def test_the_client_grid_lists_users_as_their_bars_stand_and_shows_its_scale(
    data: dict[str, pd.DataFrame],
) -> None:
    """Top to bottom in the order of the users' bars (bob made more requests, alice spent
    more), with a colour scale that says what it counts."""
    for by in ("requests", "spend"):
        bars = traces(figures.user_bars(data["by_user"], by))[0]
        order = figures.user_order(data["by_user"], by)
        grid = figures.client_matrix(data["user_client_matrix"], None, order)
        heat = traces(grid)[0]
        assert list(heat.y) == list(bars.y)  # both draw their first category at the bottom
        assert list(reversed(heat.y)) == order
        assert heat.showscale and heat.colorbar.title.text == "Requests"


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_the_cache_hit_rate_line_stands_out_on_both_themes(data: dict[str, pd.DataFrame]) -> None:
    """WCAG contrast of at least 3 against Streamlit's light (#FFFFFF) and dark (#0E1117)
    backgrounds: the near-black line vanished on the dark theme."""
    line = next(tr for tr in traces(figures.cache_trend(data["by_bucket"])) if tr.yaxis == "y2")
    colour = line.line.color
    for background in ("#FFFFFF", "#0E1117"):
        light, dark = sorted((_luminance(colour), _luminance(background)), reverse=True)
        assert (light + 0.05) / (dark + 0.05) >= 3, (colour, background)


# --- axes: one way to write each kind of number ---------------------------------------------


def _failures(days: int, per_day: int = 1) -> pd.DataFrame:
    buckets = pd.date_range("2026-11-20", periods=days, freq="D")
    return pd.DataFrame(
        {"bucket": buckets, "node": "l40-a", "error_class": "InternalServerError", "failures": per_day}
    )


def _in_flight(peak: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "bucket": pd.date_range("2026-11-20", periods=4, freq="15min"),
            "node": "l40-a",
            "peak_in_flight": [1, peak, 2, 1],
            "in_flight": [1, 2, 3, peak],
            "latency_p50_ms": [840.0, 2_400.0, 11_695.0, 6_000.0],
        }
    )


@pytest.mark.parametrize("peak", [1, 2, 3, 7, 13])
def test_count_axes_tick_whole_numbers_only(peak: int) -> None:
    """Requests in flight and failed requests: no tick at 0.5 or 1.5 of a request."""
    for fig in (
        figures.node_lines(_in_flight(peak), "peak_in_flight", "Requests in flight"),
        figures.failures_over_time(_failures(3, per_day=peak)),
    ):
        axis = valid(fig).layout.yaxis
        assert axis.tickmode == "array" and axis.title.text, axis
        assert all(float(v).is_integer() for v in axis.tickvals), axis.tickvals
        assert len(axis.tickvals) >= 2 and max(axis.tickvals) >= peak
        assert list(axis.ticktext) == [f"{v:,.0f}" for v in axis.tickvals]


def test_the_latency_axis_reads_seconds_and_its_x_axis_has_a_title() -> None:
    fig = valid(figures.node_lines(_in_flight(4), "latency_p50_ms", "Latency", x="in_flight"))
    assert list(fig.layout.yaxis.ticktext) == ["0", "5 s", "10 s", "15 s"]
    assert fig.layout.xaxis.title.text == "Requests in flight"
    assert all(float(v).is_integer() for v in fig.layout.xaxis.tickvals)
    assert list(fig.data[0].hovertext) == ["840 ms", "2.4 s", "11.7 s", "6.0 s"]  # as the tables
    with use_language("ko"):
        korean = valid(figures.node_lines(_in_flight(4), "latency_p50_ms", "지연 시간", x="in_flight"))
    assert list(korean.layout.yaxis.ticktext) == ["0", "5초", "10초", "15초"]
    assert korean.layout.xaxis.title.text == "처리 중인 요청"


def test_korean_token_axes_count_in_man_as_the_cards_do() -> None:
    series = pd.DataFrame(
        {
            "bucket": pd.date_range("2026-11-20", periods=3, freq="D"),
            **{kind: [10_000, 0, 5_000] for kind in figures.KINDS},
            "total_tokens": [40_000, 0, 20_000],
        }
    )
    english = valid(figures.tokens_over_time(series)).layout.yaxis
    assert list(english.ticktext) == ["0", "10k", "20k", "30k", "40k"]
    with use_language("ko"):
        korean = valid(figures.tokens_over_time(series)).layout.yaxis
    assert list(korean.ticktext) == ["0", "1만", "2만", "3만", "4만"] and korean.title.text == "토큰"


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("days", [2, 3, 7])
def test_daily_date_axes_tick_once_a_day_with_month_and_day(language: Language, days: int) -> None:
    """A few days of daily buckets: one tick a day, written as month and day (Plotly's own
    step would be 12 hours, "00:00" under each day); the hours' format never for a day."""
    with use_language(language):
        axis = valid(figures.failures_over_time(_failures(days))).layout.xaxis
    assert axis.dtick == 86_400_000
    chosen = next(s.value for s in axis.tickformatstops if _holds(s.dtickrange, axis.dtick))
    assert chosen == {"en": "%b %-d", "ko": "%-m월 %-d일"}[language]
    assert "%H" not in chosen and "%H" not in axis.hoverformat


def _holds(dtickrange: Any, dtick: int) -> bool:
    """Whether a tickformatstop applies to `dtick` as Plotly decides it: the first whose
    range holds it, both ends included (None: open)."""
    low, high = dtickrange
    number = {"M1": 30 * 86_400_000, "M12": 365 * 86_400_000}
    low, high = number.get(low, low), number.get(high, high)
    return (low is None or low <= dtick) and (high is None or dtick <= high)


def test_tooltips_write_amounts_and_shares_as_the_tables() -> None:
    """$0.065 and 61.0 % (Korean 61.0%), not Plotly's "$0.0650" from ",.4f" next to
    "61.0%" from ".1%": one formatter for cards, tables and tooltips."""
    users = pd.DataFrame(
        {
            "user": ["alice", "bob"],
            "spend_usd": [0.065, 2.04],
            "spend_share": [0.0309, 0.9691],
            "total_tokens": [30_692, 1_000],
            "tokens_share": [0.97, 0.03],
            "requests": [3, 1],
            "requests_share": [0.75, 0.25],
        }
    )
    spend = valid(figures.user_bars(users, "spend")).data[0]
    assert sorted(spend.hovertext) == ["alice · Spend: $0.065", "bob · Spend: $2.04"]
    tokens = valid(figures.share_bars(users.rename(columns={"user": "node"}), "node", ["tokens"])).data[0]
    assert "alice: 30,692 (96.8 %)" in tokens.hovertext  # its share of the bars shown
    series = pd.DataFrame(
        {
            "bucket": pd.date_range("2026-11-20", periods=2, freq="D"),
            "cached_tokens": [610, 0],
            "uncached_prompt_tokens": [390, 0],
            "total_tokens": [1_000, 0],
            "cache_hit_rate": [0.6097, float("nan")],
        }
    )
    with use_language("ko"):
        cache = valid(figures.cache_trend(series))
    assert list(cache.data[-1].hovertext) == ["61.0%", "—"]
    assert list(cache.layout.yaxis2.ticktext) == ["0%", "25%", "50%", "75%", "100%"]


def test_the_failures_chart_covers_the_page_range_not_only_its_failures() -> None:
    """It started at its first failure, a day later than the other charts of the page."""
    failures = pd.DataFrame(
        {"bucket": [pd.Timestamp("2026-11-21 05:00")], "node": ["a"], "error_class": ["x"], "failures": [2]}
    )
    span = figures.Span("2026-11-20 00:00:00", "2026-11-22 00:00:00", "hour")
    figure = figures.failures_over_time(failures, span).to_dict()
    axis = figure["layout"]["xaxis"]
    assert axis["range"] == ["2026-11-20 00:00:00", "2026-11-22 00:00:00"] and axis["autorange"] is False
    # the bar fills its hour (05:00 to 06:00), not half of 04:00's
    assert (figure["data"][0]["xperiod"], figure["data"][0]["xperiodalignment"]) == (3_600_000, "middle")


@pytest.mark.parametrize(("most", "lang", "texts"), [(3, "en", ["0", "1", "2", "3"]), (24_000, "ko", None)])
def test_the_client_grid_scale_ticks_whole_requests(
    most: int, lang: Language, texts: list[str] | None
) -> None:
    matrix = pd.DataFrame(
        {"user": ["alice", "bob"], "client": ["curl", "curl"], "requests": [1, most]}
    ).assign(total_tokens=10, spend_usd=0.01)
    with use_language(lang):
        bar = valid(figures.client_matrix(matrix)).data[0].colorbar
    assert all(float(v).is_integer() for v in bar.tickvals) and bar.tickvals[-1] >= most
    assert list(bar.ticktext) == (texts or ["0", "5,000", "1만", "1.5만", "2만", "2.5만"])


def test_share_bars_are_sized_to_their_bars() -> None:
    """A student's two clients drew giant blocks in a chart made for ten."""
    two = pd.DataFrame(
        {
            "client": ["OpenCode", "curl"],
            "requests": [3, 1],
            "total_tokens": [30, 10],
            "requests_share": [0.75, 0.25],
            "tokens_share": [0.75, 0.25],
        }
    )
    many = pd.concat([two.assign(client=[f"c{i}", f"d{i}"]) for i in range(6)], ignore_index=True)
    small = figures.share_bars(two, "client", ("requests", "tokens")).to_dict()["layout"]["height"]
    tall = figures.share_bars(many, "client", ("requests", "tokens")).to_dict()["layout"]["height"]
    assert small <= 34 * 2 + 90 < tall <= figures.HEIGHT


def test_the_users_bars_and_their_clients_grid_grow_with_the_people_shown() -> None:
    """One person's bar and grid row drew 320 px blocks; thirteen people need their rows."""

    def people(n: int) -> pd.DataFrame:
        names = [f"student-{i:02d}" for i in range(n)]
        spend = [float(n - i) for i in range(n)]
        return pd.DataFrame(
            {
                "user": names,
                "spend_usd": spend,
                "total_tokens": [100 * s for s in spend],
                "requests": [int(s) for s in spend],
                "spend_share": [s / sum(spend) for s in spend],
                "tokens_share": [s / sum(spend) for s in spend],
                "requests_share": [s / sum(spend) for s in spend],
            }
        )

    def grid(n: int) -> pd.DataFrame:
        return pd.DataFrame(
            {"user": [f"student-{i:02d}" for i in range(n)], "client": "OpenCode", "requests": 3}
        ).assign(total_tokens=30, spend_usd=0.03)

    bars = {n: figures.user_bars(people(n), "spend").to_dict()["layout"]["height"] for n in (1, 13)}
    cells = {n: figures.client_matrix(grid(n)).to_dict()["layout"]["height"] for n in (1, 13)}
    assert bars[1] <= 100 and cells[1] <= 160  # one row is a bar's thickness, not a wall
    assert bars[13] >= 13 * 26 and cells[13] >= 13 * 26  # each of thirteen gets a readable row


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("counts", [[60, 20, 19, 1], [1], [5, 5], [999, 1]])
def test_share_labels_have_room_after_their_bars_in_the_narrowest_panel(
    lang: Language, counts: list[int]
) -> None:
    """Plotly reserves no room for a horizontal bar's outside text: each panel's axis ends
    where every bar's label still fits after it in a SHARE_PANEL_PX panel (the GPU nodes'
    on a 1280 px screen; tests/test_widths.py checks the labels there in Chromium)."""
    frame = pd.DataFrame(
        {
            "node": [f"node-{i}" for i in range(len(counts))],
            "requests": counts,
            "total_tokens": [c * 1000 for c in reversed(counts)],
        }
    )
    with use_language(lang):
        fig = valid(figures.share_bars(frame, "node", ("requests", "tokens")))
    panel = figures.SHARE_PANEL_PX
    for trace, axis in zip(fig.data, (fig.layout.xaxis, fig.layout.xaxis2), strict=True):
        assert trace.textposition == "outside" and trace.cliponaxis is False
        end = axis.range[1]
        for value, text in zip(values(trace.x), trace.text, strict=True):
            bar = value / end * panel
            assert bar + figures.LABEL_GAP_PX + figures.LABEL_PX * len(text) <= panel + 1e-9, (text, bar)
        assert end < max(values(trace.x)) * 2.2  # and the bars still fill most of it


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_date_labels_stay_level_and_few_enough_for_their_chart(lang: Language) -> None:
    """Plotly turned the Prompt caching chart's eight dates on their side at 1280 px: every
    time chart keeps its labels level, at most DATE_LABELS of them, on midnights inside
    the page's span (never half off its edge)."""
    days = pd.date_range("2026-11-28", periods=8, freq="D")
    series = pd.DataFrame(
        {
            "bucket": days,
            **dict.fromkeys(figures.KINDS, 100),
            "cached_tokens": 100,
            "uncached_prompt_tokens": 300,
            "total_tokens": 500,
            "cache_hit_rate": 0.25,
            "requests": 3,
            "successes": 2,
            "failures": 1,
        }
    )
    span = figures.Span("2026-11-28 00:00:00", "2026-12-06 00:00:00", "day")
    nodes = series.assign(node="l40-a", output_tps_p50=40.0)
    with use_language(lang):
        charts = {
            "cache": figures.cache_trend(series, span=span),
            "wide": figures.tokens_over_time(series, span=span),
            "half": figures.node_lines(nodes, "output_tps_p50", "tok/s", span=span),
            "page": figures.failures_over_time(_failures(8).assign(bucket=days), span),
        }
    start, end = pd.Timestamp(span.start), pd.Timestamp(span.end)
    for name, fig in charts.items():
        axis = valid(fig).layout.xaxis
        assert axis.tickangle == 0, name
        step = pd.Timedelta(milliseconds=axis.dtick)
        first = pd.Timestamp(axis.tick0) if axis.tick0 is not None else start
        ticks = [first + i * step for i in range(-20, 20) if start < first + i * step < end]
        assert 2 <= len(ticks) <= figures.DATE_LABELS[name], (name, ticks)
        assert all(tick == tick.normalize() for tick in ticks), name  # on midnights, as "Nov 29"


def test_a_tables_unknown_is_the_same_word_as_the_charts() -> None:
    """The Korean Nodes page's charts said 알 수 없음 and its tables "unknown"."""
    from dashboard import tables

    frame = pd.DataFrame(
        {"node": ["unknown", "blackwell"], "model": ["unknown-model", "gpt-oss-120b"], "requests": [3, 5]}
    )
    with use_language("ko"):
        shown = tables.styled(frame, {}).to_html()
        chart = traces(figures.node_lines(frame.assign(band=["0-500"] * 2), "requests", "n", x="band"))
    assert "알 수 없음" in shown and "알 수 없는 모델" in shown and ">unknown<" not in shown
    assert "알 수 없음" in [t.name for t in chart]
    assert "blackwell" in shown and "gpt-oss-120b" in shown


def test_the_users_bars_split_by_client_show_who_used_which_tool(data: dict[str, pd.DataFrame]) -> None:
    """A segment per client in the Clients chart's order, each user's segments adding up to
    their bar; a click still selects the user; the highlight dims the others."""
    clients = figures.client_order(data["by_client"])
    figure = figures.user_client_bars(data["by_user"], data["user_client_matrix"], "requests", None, clients)
    *bars, labels = traces(figure)
    assert [b.name for b in bars] == [figures.label(c) for c in clients]
    assert labels.mode == "text" and list(labels.y) == list(bars[0].y)
    by_user = data["by_user"].set_index("user")["requests"]
    for index, user in enumerate(bars[0].y):
        assert sum(float(b.x[index]) for b in bars) == by_user[user]  # the segments make the bar
        assert bars[0].customdata[index] == user
    matrix = data["user_client_matrix"].set_index(["user", "client"])["requests"]
    claude = next(b for b in bars if b.name == "Claude Code")
    assert float(claude.x[list(claude.y).index("alice")]) == matrix[("alice", "Claude Code")]
    lit = traces(
        figures.user_client_bars(data["by_user"], data["user_client_matrix"], "requests", "alice", clients)
    )
    row = list(lit[0].y).index("alice")
    assert lit[0].marker.opacity[row] == 1.0 and min(lit[0].marker.opacity) == figures.DIMMED


def test_a_user_the_grid_folds_keeps_the_whole_bar_in_grey(data: dict[str, pd.DataFrame]) -> None:
    """The grid keeps fewer people than the bars: a user missing from it is one grey
    segment, never a bar cut short."""
    matrix = data["user_client_matrix"]
    alice_only = matrix[matrix["user"] == "alice"]
    bars = traces(figures.user_client_bars(data["by_user"], alice_only, "requests"))[:-1]
    rest = bars[-1]
    assert rest.name == "clients not broken down"
    bob = list(rest.y).index("bob")
    assert float(rest.x[bob]) == data["by_user"].set_index("user").loc["bob", "requests"]


def test_the_clickable_users_bars_carry_the_selection_settings_streamlit_would_add(
    data: dict[str, pd.DataFrame],
) -> None:
    """Streamlit's chart sets clickmode, hovermode and dragmode on a chart whose points a
    click selects, where the layout has none, and then draws the chart a second time
    (issue 30): the users' bars carry them from the start; the students' peers chart,
    which nobody clicks, does not."""
    clients = figures.client_order(data["by_client"])
    clickable = [
        figures.user_bars(data["by_user"], "requests", selectable=True),
        figures.user_client_bars(
            data["by_user"], data["user_client_matrix"], "requests", None, clients, selectable=True
        ),
    ]
    for shown in clickable:
        layout = shown.to_dict()["layout"]
        assert {key: layout.get(key) for key in figures.SELECTABLE} == figures.SELECTABLE
    peers = figures.user_bars(data["by_user"], "requests", "alice", shares_only=True).to_dict()["layout"]
    assert not set(figures.SELECTABLE) & set(peers)
    # the values Streamlit's chart sets for selection_mode="points" (its build, not a guess)
    bundle = next(preload.STATIC_JS.glob("PlotlyChart.*.js")).read_text()
    assert "clickmode" in bundle and "`event+select`" in bundle and "hovermode||(t=`closest`)" in bundle
