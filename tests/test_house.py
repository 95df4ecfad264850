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
