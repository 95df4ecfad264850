"""The README and docs/*.md name only what exists: link targets and their anchors,
repository paths, `python -m` modules, make targets and `python -m etl` subcommands. A
rename that leaves a page behind fails here, naming the page, the line and what is
missing; and the README stays short (issue 31)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README_MAX_LINES = 220

# Backticked words that start like a path of this repository are checked.
PATH_PREFIXES = (
    "etl/",
    "queries/",
    "dashboard/",
    "state/",
    "bench/",
    "deploy/",
    "docs/",
    "tests/",
    ".streamlit/",
    ".ci/",
)
TOP_LEVEL_FILES = frozenset(
    {"app.py", "page.py", "Makefile", "pyproject.toml", "requirements.txt", "requirements-dev.txt"}
)
# Paths the docs name on purpose that are not in the repository (a folder: all under it).
NOT_IN_REPO = {
    ".streamlit/secrets.toml": "each installation makes it from secrets.toml.example; never committed",
    "bench/out/": "where the benchmarks write their stores and reports (git-ignored)",
}
# A glob, a placeholder or an elision names many paths or none: not checked.
PLACEHOLDER = re.compile(r"[*?\[\]{}<>]|YYYY|\.\.\.|…")

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`([^`]+)`")
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
PYTHON_M = re.compile(r"\bpython3?(?:\.\d+)?\s+-m\s+([A-Za-z_][\w.]*)(?:\s+([a-z][\w-]*))?")
# `make` as the command of a line or after a shell operator, perhaps after VAR=value words
MAKE = re.compile(r"(?:^|&&|;|\|\|)\s*(?:[A-Za-z_]\w*=\S*\s+)*make\b([^#;&|]*)")
MAKE_RULE = re.compile(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", re.MULTILINE)


@dataclass(frozen=True)
class Text:
    """A piece of a document to check, and the line it starts on."""

    line: int
    text: str
    fenced: bool  # a line of a fenced block (else a code span of the prose)


@dataclass(frozen=True)
class Doc:
    """A README or docs page, split into what the checks read."""

    path: Path  # where links are resolved from
    prose: list[tuple[int, str]]  # (line number, line) outside fenced blocks
    code: list[Text]  # code spans of the prose, and every line of the fenced blocks
    anchors: frozenset[str]  # of its headings


def documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def parse(path: Path, text: str) -> Doc:
    prose: list[tuple[int, str]] = []
    code: list[Text] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
        elif fenced:
            code.append(Text(number, line, fenced=True))
        else:
            prose.append((number, line))
            code += [Text(number, m.group(1), fenced=False) for m in INLINE_CODE.finditer(line)]
    return Doc(path, prose, code, anchors(line for _, line in prose))


def name(path: Path) -> str:
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the text as shown, lower case, without punctuation
    but `-` and `_`, spaces as hyphens."""
    shown = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", shown.strip().lower()).replace(" ", "-")


def anchors(prose: Iterable[str]) -> frozenset[str]:
    found: set[str] = set()
    for line in prose:
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(1))
            anchor, n = base, 0
            while anchor in found:  # GitHub numbers repeated headings: x, x-1, x-2
                n += 1
                anchor = f"{base}-{n}"
            found.add(anchor)
    return frozenset(found)


@cache
def anchors_of(path: Path) -> frozenset[str]:
    return parse(path, path.read_text(encoding="utf-8")).anchors


@cache
def etl_subcommands() -> frozenset[str]:
    """The subcommands `python -m etl --help` lists, wherever its parser lives."""
    result = subprocess.run(
        [sys.executable, "-m", "etl", "--help"], cwd=REPO, capture_output=True, text=True, check=True
    )
    section = result.stdout.split("positional arguments:", 1)[1].split("\n\n", 1)[0]
    commands = frozenset(re.findall(r"^    ([a-z][\w-]*)(?:\s{2,}|$)", section, flags=re.MULTILINE))
    assert commands, f"no subcommands found in `python -m etl --help`:\n{result.stdout}"
    return commands


def make_targets() -> frozenset[str]:
    return frozenset(MAKE_RULE.findall((REPO / "Makefile").read_text(encoding="utf-8")))


def broken_links(doc: Doc) -> Iterator[str]:
    for number, line in doc.prose:
        for match in LINK.finditer(INLINE_CODE.sub("", line)):
            target = match.group(1)
            if re.match(r"(https?|mailto):", target):
                continue
            file, _, anchor = target.partition("#")
            where = f"{name(doc.path)}:{number}"
            if not file:  # within the page
                if anchor not in doc.anchors:
                    yield f"{where}: link target {target}: the page has no heading #{anchor}"
                continue
            linked = (doc.path.parent / file).resolve()
            if not linked.exists():
                yield f"{where}: link target {target} does not exist"
            elif anchor and linked.suffix == ".md" and anchor not in anchors_of(linked):
                yield f"{where}: link target {target}: {name(linked)} has no heading #{anchor}"


def repo_path(word: str) -> str | None:
    """The repository path a backticked word names, if it looks like one."""
    word = word.lstrip("\"'(").rstrip("\"'),;.").split("::", 1)[0].split(":", 1)[0]
    if word in TOP_LEVEL_FILES or word.startswith(PATH_PREFIXES):
        return word
    return None


def not_in_repo(path: str) -> bool:
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in NOT_IN_REPO)


def missing_paths(doc: Doc) -> Iterator[str]:
    for span in doc.code:
        if span.fenced:
            continue  # commands and their output, whose paths they may make themselves
        for word in span.text.split():
            path = repo_path(word)
            if path is None or PLACEHOLDER.search(path) or not_in_repo(path):
                continue
            if not (REPO / path).exists():
                yield f"{name(doc.path)}:{span.line}: path {path} does not exist"


def module_exists(module: str) -> bool:
    """Without importing it: our own module's file, or a package installed in this
    environment (`python -m streamlit`)."""
    top = module.split(".", 1)[0]
    if (REPO / top).is_dir() or (REPO / f"{top}.py").is_file():
        path = REPO.joinpath(*module.split("."))
        return path.with_suffix(".py").is_file() or (path / "__main__.py").is_file()
    return importlib.util.find_spec(top) is not None


def wrong_commands(doc: Doc) -> Iterator[str]:
    targets = make_targets()
    for span in doc.code:
        where = f"{name(doc.path)}:{span.line}"
        for match in PYTHON_M.finditer(span.text):
            module, subcommand = match.group(1), match.group(2)
            if not module_exists(module):
                yield f"{where}: python -m {module}: no such module (nor a package with __main__.py)"
            elif module == "etl" and subcommand and subcommand not in etl_subcommands():
                known = ", ".join(sorted(etl_subcommands()))
                yield f"{where}: python -m etl {subcommand}: no such subcommand (there are {known})"
        for match in MAKE.finditer(span.text):
            words = [w for w in match.group(1).split() if not w.startswith("-") and "=" not in w]
            if words and words[0] not in targets:
                yield f"{where}: make {words[0]}: no such target in the Makefile"


def problems(path: Path, text: str) -> list[str]:
    doc = parse(path, text)
    return [*broken_links(doc), *missing_paths(doc), *wrong_commands(doc)]


def test_the_docs_name_only_what_exists() -> None:
    found = [p for path in documents() for p in problems(path, path.read_text(encoding="utf-8"))]
    assert not found, "\n".join(found)


def test_the_readme_is_short() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, (
        f"README.md: {lines} lines, more than {README_MAX_LINES}: move the detail to a page of docs/"
    )


def test_every_doc_page_is_linked_from_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    unlinked = [p.name for p in documents()[1:] if f"](docs/{p.name}" not in readme]
    assert not unlinked, f"README.md links to no page {', '.join(unlinked)}"


def test_the_check_finds_each_kind_of_mistake() -> None:
    """The checks themselves can fail: one made-up mistake of each kind, each named."""
    page = REPO / "docs" / "made-up.md"
    known = ", ".join(sorted(etl_subcommands()))
    text = "\n".join(
        [
            "# Made up",
            "See [the store](store.md), [nothing](nothing.md) and [a heading](store.md#nowhere).",
            "[Up](#made-up), [down](#down). The code is in `etl/run.py:run_etl` and `etl/nothing.py`.",
            "Globs and placeholders pass: `queries/*.sql`, `docs/<page>.md`; `bench/out/x` is made.",
            "`.streamlit/secrets.toml` is made; `.streamlit/secrets.toml.example` is not, `.streamlit/x`",
            "```sh",
            ".venv/bin/python -m etl doctor && .venv/bin/python -m etl nothing",
            "python -m bench.nothing; STREAMLIT_SERVER_PORT=8502 make run PYTHON=python3.12",
            "make nothing   # a comment that says make sense is no command",
            "```",
            "`python -m dashboard.auth hash-password`, `make test`",
        ]
    )
    assert problems(page, text) == [
        "docs/made-up.md:2: link target nothing.md does not exist",
        "docs/made-up.md:2: link target store.md#nowhere: docs/store.md has no heading #nowhere",
        "docs/made-up.md:3: link target #down: the page has no heading #down",
        "docs/made-up.md:3: path etl/nothing.py does not exist",
        "docs/made-up.md:5: path .streamlit/x does not exist",
        f"docs/made-up.md:7: python -m etl nothing: no such subcommand (there are {known})",
        "docs/made-up.md:8: python -m bench.nothing: no such module (nor a package with __main__.py)",
        "docs/made-up.md:9: make nothing: no such target in the Makefile",
    ]
