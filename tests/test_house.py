"""The house's rooms say what they hold: a module longer than a screen or two says at its
top why it is one module (issue 31), so that a long file is a decision, not an accident."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
MOST_LINES = 400
REASON = "One module because"


def python_files(root: Path) -> list[Path]:
    """The repository's Python files (tracked or new, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [root / name for name in listed if (root / name).is_file()]


def long_without_reason(paths: list[Path], root: Path) -> list[str]:
    """Each module over MOST_LINES lines whose docstring does not say why it is one."""
    found = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MOST_LINES and REASON not in (ast.get_docstring(ast.parse(text)) or ""):
            found.append(f"{path.relative_to(root)}: {lines} lines, no '{REASON} ...' at its top")
    return found


def test_every_long_module_says_why_it_is_one() -> None:
    assert long_without_reason(python_files(REPO), REPO) == []


@pytest.mark.parametrize(
    ("docstring", "named"),
    [('"""A module."""', True), (f'"""A module.\n\n{REASON} it is a catalogue."""', False)],
)
def test_a_long_module_is_named_unless_it_says_why(tmp_path: Path, docstring: str, named: bool) -> None:
    path = tmp_path / "long.py"
    path.write_text(docstring + "\n" + "x = 1\n" * MOST_LINES, encoding="utf-8")
    assert bool(long_without_reason([path], tmp_path)) is named
    short = tmp_path / "short.py"
    short.write_text('"""A module."""\n' + "x = 1\n" * (MOST_LINES - 1), encoding="utf-8")
    assert long_without_reason([short], tmp_path) == []


def direct_plotly_charts(paths: list[Path], root: Path) -> list[str]:
    """Each call of `st.plotly_chart` outside dashboard/panels/plot.py: the one way a figure
    reaches the page is `plot()`, which draws it once per change (no Streamlit theme, its
    data named; issue 30)."""
    found = []
    for path in paths:
        if path.relative_to(root).as_posix() == "dashboard/panels/plot.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr == "plotly_chart":
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_every_chart_reaches_the_page_through_plot() -> None:
    pages = [
        path for path in python_files(REPO) if path.relative_to(REPO).parts[0] in ("dashboard", "page.py")
    ]
    assert direct_plotly_charts(pages, REPO) == []


def test_a_direct_plotly_chart_is_named(tmp_path: Path) -> None:
    (tmp_path / "dashboard" / "panels").mkdir(parents=True)
    direct = tmp_path / "dashboard" / "page.py"
    direct.write_text("import streamlit as st\n\nst.plotly_chart({}, key='x')\n", encoding="utf-8")
    allowed = tmp_path / "dashboard" / "panels" / "plot.py"
    allowed.write_text("import streamlit as st\n\nst.plotly_chart({}, key='x')\n", encoding="utf-8")
    assert direct_plotly_charts([direct, allowed], tmp_path) == ["dashboard/page.py:3"]
