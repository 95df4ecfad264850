"""The house's layers, read from the code's imports (every `import`, at the top or inside
a function): the store contract below both the ETL (its only writer) and the query layer
(its readers); neither of those two imports the other; what needs both sits above them.

    settings    usage.toml, the environment, defaults; the error a person can act on
    contract    the store's layout, schemas, measures, rollups (docs/store.md)
    etl         extract -> transform -> load: writes the store
    queries     DuckDB over the store: reads it
    state       the dashboard's own state (sessions, sign-in gate)
    ops         the commands cron runs: a run, then the budget metrics read back
    dashboard   the pages
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# what each package of the house may import of the others (besides itself)
MAY_IMPORT: dict[str, frozenset[str]] = {
    "settings": frozenset(),
    "contract": frozenset({"settings"}),
    "etl": frozenset({"settings", "contract"}),
    "queries": frozenset({"settings", "contract"}),
    "state": frozenset({"settings"}),
    "ops": frozenset({"settings", "contract", "etl", "queries"}),
    "dashboard": frozenset({"settings", "contract", "etl", "queries", "state"}),
}
HOUSE = frozenset(MAY_IMPORT) | {"app", "page", "tests", "bench", "docs"}
# Entry points sit on top and may import anything: `python -m etl` (the command in every
# lab's cron line) hands over to ops/cli.py.
ENTRY_POINTS = frozenset({"etl/__main__.py"})


def imported_packages(path: Path) -> dict[str, int]:
    """The house's top-level packages `path` imports, each with the first line naming it."""
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if top in HOUSE:
                found.setdefault(top, node.lineno)
    return found


def breaches(root: Path) -> list[str]:
    """Every import across the layers above, as 'file:line: package imports other'."""
    found = []
    for package, allowed in MAY_IMPORT.items():
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative in ENTRY_POINTS:
                continue
            for other, line in imported_packages(path).items():
                if other != package and other not in allowed:
                    found.append(f"{relative}:{line}: {package} imports {other}")
    return found


def test_every_package_imports_only_the_layers_below_it() -> None:
    assert breaches(REPO) == []


def test_every_package_of_the_house_has_a_rule() -> None:
    packages = {p.parent.name for p in REPO.glob("*/__init__.py")}
    assert packages - set(MAY_IMPORT) - {"tests", "bench", "docs"} == set()


@pytest.mark.parametrize(
    ("package", "line", "breach"),
    [
        ("etl", "from queries.runner import StoreReader", "etl imports queries"),
        ("queries", "    from etl import rollup  # inside a function", "queries imports etl"),
        ("contract", "import dashboard.figures", "contract imports dashboard"),
        ("settings", "from contract.store import DAY_FILE", "settings imports contract"),
    ],
)
def test_a_breach_is_found_and_named(tmp_path: Path, package: str, line: str, breach: str) -> None:
    """The check itself: a module that imports across the layers is named, with its line,
    also when the import sits inside a function."""
    (tmp_path / package).mkdir()
    code = f"def f() -> None:\n{line}\n" if line.startswith(" ") else f"{line}\n"
    (tmp_path / package / "module.py").write_text(code)
    assert breaches(tmp_path) == [f"{package}/module.py:{2 if line.startswith(' ') else 1}: {breach}"]
