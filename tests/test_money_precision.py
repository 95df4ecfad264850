"""Money by one rule (issue 28.6): every amount on the Overview and the Budgets page (cards,
the glance block, captions, chart labels and tooltips, tables) is written as
dashboard/format.py's usd() writes its value, on the lab of tests/verdict_lab.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import format as fmt
from tests import verdict_lab
from tests.test_dashboard_strings import shown_text
from tests.test_pages import open_page

WEEK = {"range": "custom", "from": "2026-12-01", "to": "2026-12-07"}
AMOUNT = re.compile(r"(?<![\w$])\$(\d{1,3}(?:,\d{3})*(?:\.\d+)?)([kMB]?)(?!\d)")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return verdict_lab.build(tmp_path_factory.mktemp("money") / "store")


def amounts(at: AppTest) -> list[str]:
    """Every "$..." the page writes: in its texts, its charts' labels and hovers, and the
    cells of its tables as they are displayed."""
    texts = [str(e.value) for e in (*at.markdown, *at.caption, *at.info, *at.warning)]
    texts += [str(m.value) for m in at.metric]
    texts += [json.dumps(json.loads(c.proto.spec)["data"]) for c in at.get("plotly_chart")]
    texts += [shown_text(frame) for frame in at.dataframe]
    found = [f"${m[1]}{m[2]}" for text in texts for m in AMOUNT.finditer(text)]
    return found


def written_by_usd(amount: str) -> bool:
    number, suffix = re.fullmatch(r"\$([\d,.]+)([kMB]?)", amount).groups()  # type: ignore[union-attr]
    value = float(number.replace(",", "")) * {"": 1, "k": 1e3, "M": 1e6, "B": 1e9}[suffix]
    return str(fmt.usd(value)) == amount


@pytest.mark.parametrize("page", ["Overview", "Budgets"])
def test_every_amount_is_written_by_one_rule(lab: Path, monkeypatch: pytest.MonkeyPatch, page: str) -> None:
    at = open_page(lab, monkeypatch, page, **WEEK)
    found = amounts(at)
    assert len(found) >= 10, found  # the cards, the block, the bars, the tables
    assert [a for a in found if not written_by_usd(a)] == []
