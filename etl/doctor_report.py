"""The doctor's findings and what it prints: `Check` (one line of the report, made by
`ok`, `warn` or `fail`), the report's lines (`report`) and the command's exit code."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Status = Literal["OK", "WARN", "FAIL"]
EXIT_OK = 0
EXIT_FIX_NEEDED = 3
MAX_NAMED = 5  # files or days named in one line before "and N more"


@dataclass(frozen=True)
class Check:
    """One line of the report; `fix` says what to do, for anything not OK."""

    name: str
    status: Status
    detail: str
    fix: str | None = None


def ok(name: str, detail: str) -> Check:
    return Check(name, "OK", detail)


def warn(name: str, detail: str, fix: str) -> Check:
    return Check(name, "WARN", detail, fix)


def fail(name: str, detail: str, fix: str) -> Check:
    return Check(name, "FAIL", detail, fix)


def exit_code(checks: Iterable[Check]) -> int:
    return EXIT_FIX_NEEDED if any(c.status == "FAIL" for c in checks) else EXIT_OK


def format_check(check: Check) -> str:
    line = f"{check.status:<4}  {check.name:<16}  {check.detail}"
    return f"{line} -> fix: {check.fix}" if check.fix else line


def report(checks: Sequence[Check]) -> list[str]:
    """The lines to print: one per check, then a summary."""
    counts = {s: sum(c.status == s for c in checks) for s in ("OK", "WARN", "FAIL")}
    if counts["FAIL"]:
        summary = "something must be fixed: see the FAIL lines, then run doctor again"
    elif counts["WARN"]:
        summary = "nothing must be fixed; the WARN lines are worth a look"
    else:
        summary = "all good"
    tally = f"{counts['OK']} OK, {counts['WARN']} WARN, {counts['FAIL']} FAIL"
    return [*(format_check(c) for c in checks), f"doctor: {tally}: {summary}"]


def _names(items: Sequence[str]) -> str:
    shown = ", ".join(items[:MAX_NAMED])
    return shown if len(items) <= MAX_NAMED else f"{shown} and {len(items) - MAX_NAMED} more"
