"""Every table on every page, in both languages, as Streamlit shows its cells: no "None"
or "nan", no raw milliseconds above 1,000, no integer above 999 without its separators."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Dataframe

from etl.run import ingest_rows
from settings.config import Config
from tests import known_store, test_node_queries, test_pages

APP = str(Path(__file__).resolve().parent.parent / "page.py")
PAGES = ("nodes", "budgets", "etl-status")
NOV_20 = {"range": "custom", "from": "2026-11-20", "to": "2026-11-21"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The known store's keys and runs, and the node queries' rows (latencies of seconds,
    prompts of thousands of tokens)."""
    path = known_store.build(tmp_path_factory.mktemp("tables") / "store")
    ingest_rows(Config(store=path, nodes=known_store.NODES), test_node_queries.ROWS)
    return path


def open_page(store: Path, monkeypatch: pytest.MonkeyPatch, path: str, lang: str) -> AppTest:
    return test_pages.open_page(store, monkeypatch, path, **NOV_20, lang=lang)


def shown(table: Dataframe) -> pd.DataFrame:
    """Each cell's text as the browser draws it: a missing value as the placeholder
    ("None" by default), a number or date by its column_config format if it has one,
    else by the Styler's display text if there is one, else as it is."""
    raw = table.value
    arrow = table.proto.arrow_data
    display = (
        dataframe_util.convert_arrow_bytes_to_pandas_df(arrow.styler.display_values)
        if arrow.styler.display_values
        else None
    )
    config: dict[str, Any] = json.loads(table.proto.columns or "{}")
    placeholder = table.proto.placeholder if table.proto.HasField("placeholder") else "None"
    out = {}
    for i, column in enumerate(raw.columns):
        options = config.get(column, {}).get("type_config", {})
        texts = []
        for row, value in enumerate(raw[column]):
            if value is None or (not isinstance(value, str) and pd.isna(value)):
                texts.append(placeholder)
            elif options.get("format") and "%" in options["format"]:
                texts.append(options["format"] % value)
            elif options.get("format"):
                texts.append(f"<{options['format']}>")  # Streamlit's own: 60.97%, 30692
            elif display is not None:
                texts.append(str(display.iloc[row, i]))
            else:
                texts.append(str(value))
        out[column] = texts
    return pd.DataFrame(out)


RAW_MS = re.compile(r"(\d[\d,.]*)\s*ms\b")
# an integer of four digits or more, not a year of a date ("2026-11-20", "2026년")
LONG_INTEGER = re.compile(r"(?<![\d,.])\d{4,}(?![\d,]|-\d\d|년)")


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("path", PAGES)
def test_every_table_writes_its_numbers_as_the_cards_do(
    store: Path, monkeypatch: pytest.MonkeyPatch, path: str, lang: str
) -> None:
    at = open_page(store, monkeypatch, path, lang)
    assert at.dataframe, path
    for table in at.dataframe:
        cells = shown(table)
        for column in cells:
            for text in cells[column]:
                where = f"{path} {column}: {text!r}"
                assert text not in ("None", "nan", "NaN", "NaT", "<NA>"), where
                assert not text.startswith("<"), where  # no column formatted by Streamlit's rules
                for value in RAW_MS.findall(text):
                    assert float(value.replace(",", "")) < 1000, where  # 1.2 s, not 1200 ms
                assert not LONG_INTEGER.search(text), where  # 30,692, not 30692
                assert not re.search(r"\d\.\d\d%", text), where  # one precision for shares


def test_the_nodes_table_reads_as_the_cards(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = open_page(store, monkeypatch, "nodes", "en")
    cells = shown(at.dataframe[0])
    assert all(re.fullmatch(r"\d+ ms|\d+\.\d s|—", text) for text in cells["latency_p50_ms"]), cells
    assert all(re.fullmatch(r"\d+\.\d %", text) for text in cells["requests_share"]), cells
    raw = at.dataframe[0].value
    assert raw["latency_p50_ms"].dtype.kind == "f"  # still a number underneath: sorts by value
