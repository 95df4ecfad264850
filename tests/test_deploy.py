"""The scheduling the README documents and deploy/ ships: the command lines are ones the
CLI accepts, systemd accepts the units, and the environment files name real settings."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from ops.cli import build_parser

REPO = Path(__file__).resolve().parent.parent
DEPLOY = REPO / "deploy"
INSTALL_DIR = "/opt/usage"


def etl_arguments(command: str) -> list[str]:
    """What follows `python -m etl` in a shell or systemd command line."""
    words = shlex.split(command)
    at = next(i for i in range(len(words) - 1) if words[i : i + 2] == ["-m", "etl"])
    rest = words[at + 2 :]
    return rest[: rest.index(">>")] if ">>" in rest else rest


def accepted(arguments: list[str]) -> bool:
    try:
        build_parser().parse_args(arguments)
    except SystemExit:
        return False
    return True


def unit_value(path: Path, key: str) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(line.split("=", 1)[1] for line in lines if line.startswith(f"{key}="))


def test_the_readme_cron_line_is_one_the_cli_accepts() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```cron\n(.*?)```", readme, flags=re.DOTALL)
    assert blocks, "the README should show a crontab line"
    lines = [line for block in blocks for line in block.splitlines() if line and not line.startswith("#")]
    for line in lines:
        schedule, command = line.split(maxsplit=5)[:5], line.split(maxsplit=5)[5]
        assert len(schedule) == 5
        arguments = etl_arguments(command.split("&&")[-1])
        assert arguments[0] == "run" and accepted(arguments), line
    assert not accepted(["run", "--no-such-flag"])  # the check itself can fail


def test_the_systemd_service_runs_a_command_the_cli_accepts() -> None:
    exec_start = unit_value(DEPLOY / "usage-etl.service", "ExecStart")
    arguments = etl_arguments(exec_start)
    assert accepted(arguments), exec_start
    assert "--metrics-file" in arguments and "--quiet" in arguments
    assert exec_start.startswith(f"{INSTALL_DIR}/.venv/bin/python ")


def test_the_timer_starts_the_service_every_five_minutes() -> None:
    timer = DEPLOY / "usage-etl.timer"
    assert unit_value(timer, "Unit") == "usage-etl.service"
    assert unit_value(timer, "OnCalendar") == "*:0/5"


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.fail("systemd-analyze is missing: .ci/run installs Debian's systemd package")
    units = []
    for unit in (*DEPLOY.glob("*.service"), *DEPLOY.glob("*.timer")):
        # the install directory here is this checkout, so that systemd finds the python
        text = unit.read_text(encoding="utf-8").replace(INSTALL_DIR, str(REPO))
        name = unit.name.replace("@.", "@8501.")  # a template, as one of its instances
        (tmp_path / name).write_text(text, encoding="utf-8")
        units.append(str(tmp_path / name))
    assert len(units) == 3
    result = subprocess.run(
        [analyze, "verify", "--man=no", *units], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr


@pytest.mark.parametrize("name", ["etl.env.example", "dashboard.env.example"])
def test_the_environment_files_name_settings_the_code_reads(name: str) -> None:
    packages = ("settings", "contract", "etl", "queries", "ops", "dashboard", "state")
    sources = "".join(p.read_text(encoding="utf-8") for d in packages for p in (REPO / d).rglob("*.py"))
    text = (DEPLOY / name).read_text(encoding="utf-8")
    variables = re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", text, re.MULTILINE)
    assert variables
    for variable in variables:
        assert f'"{variable}"' in sources, f"{name}: nothing reads {variable}"
