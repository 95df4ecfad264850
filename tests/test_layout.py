"""Meta-tests that keep the layout's promises: SQL lives in queries/, pages in dashboard/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_query_layer_never_imports_streamlit() -> None:
    for path in (REPO / "queries").rglob("*.py"):
        assert "streamlit" not in imports(path), path


def test_the_dashboard_holds_no_sql_and_no_database() -> None:
    sql = re.compile(r"\b(SELECT|INSERT|CREATE|UPDATE|DELETE)\b\s+[\w\"*(]", re.IGNORECASE)
    for path in [*(REPO / "dashboard").rglob("*.py"), REPO / "app.py", REPO / "page.py"]:
        assert not ({"duckdb", "psycopg", "sqlalchemy"} & imports(path)), path
        assert not sql.search(path.read_text(encoding="utf-8")), path


def test_litellm_is_never_a_runtime_dependency() -> None:
    requirements = (REPO / "requirements.txt").read_text(encoding="utf-8").lower()
    assert not re.search(r"^litellm\b", requirements, re.MULTILINE)
    for path in [
        *(REPO / "etl").rglob("*.py"),
        *(REPO / "queries").rglob("*.py"),
        *(REPO / "dashboard").rglob("*.py"),
    ]:
        assert not {"litellm", "litellm_proxy_extras"} & imports(path), path


def test_every_query_file_says_what_it_returns() -> None:
    for path in (REPO / "queries").glob("*.sql"):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        assert first.startswith(f"-- {path.stem}: "), path


def test_no_query_reads_the_unscoped_tables() -> None:
    """A student's scope lives in the *_in_scope and scoped views: a query reading the
    tables beneath them would skip it."""
    raw = re.compile(r"\b(FROM|JOIN)\s+(facts|keys|users)\b", re.IGNORECASE)
    for path in (REPO / "queries").glob("*.sql"):
        assert not raw.search(path.read_text(encoding="utf-8")), path
