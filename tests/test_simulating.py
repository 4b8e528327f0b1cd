"""`labwright simulate` (labwright.simulating): a lean start, the same simulation as before.

``tests/simulate_golden/`` holds what the typer command reported before the lean entry (main
49d69e4) and the runtime's events and final twin for the same protocols: every path to the
command (the console script, ``python -m labwright``, the typer app in process) must still
give exactly that, with the deck geometry from the cache or built by PyLabRobot.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, labwright, modules_imported_by

from labwright.cli import run
from labwright.simulating import simulate

pytestmark = pytest.mark.slow

GOLDEN = ROOT / "tests" / "simulate_golden"
LAB = ROOT / "examples" / "lab.yaml"
PROTOCOLS = {
    "transfers_96": GOLDEN / "transfers_96.yaml",
    "serial_dilution": ROOT / "examples" / "protocols" / "serial_dilution.yaml",
}
CONSOLE = Path(sys.executable).parent / "labwright"
TIMINGS = ("simulate_ms", "total_ms")
JSON_96 = [str(PROTOCOLS["transfers_96"]), "--config", str(LAB), "--json"]
# Nothing of the command line or the task agent; with --json not even rich.
NOT_ON_THE_SIMULATE_PATH = {
    "typer",
    "click",
    "rich",
    "agents",
    "langgraph",
    "langchain_core",
    "mcp",
    "httpx",
    "state_store",
    "asyncio",
    "sqlite3",
}


def golden(name: str, suffix: str) -> Any:
    text = (GOLDEN / f"{name}{suffix}").read_text()
    return json.loads(text) if suffix.endswith(".json") else text


def without_timings(report: dict[str, Any]) -> dict[str, Any]:
    assert all(isinstance(report[k], float) for k in TIMINGS)
    return {k: v for k, v in report.items() if k not in TIMINGS}


def words(text: str) -> list[str]:
    """The text a person reads, its one timing masked (rich folds lines at 80 columns)."""
    return re.sub(r"\d+(\.\d+)? ms", "<t> ms", text).split()


@pytest.mark.parametrize("name", PROTOCOLS)
def test_the_runtime_simulates_each_protocol_exactly_as_before(name: str, tmp_path: Path) -> None:
    done = simulate(PROTOCOLS[name], LAB, None)
    then = golden(name, ".events.json")
    now = json.loads(
        json.dumps(
            {"per_step": done.per_step, "twin": done.twin.snapshot(full=True)}, sort_keys=True
        )
    )
    assert now["per_step"] == then["per_step"]
    assert now["twin"] == then["twin"]
    assert done.report["warnings"] == then["warnings"]
    assert without_timings(done.report) == golden(name, ".json")


@pytest.mark.parametrize("entry", ["console", "python -m", "typer app"])
def test_every_entry_reports_the_96_transfers_as_before(
    entry: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["simulate", *JSON_96]
    if entry == "typer app":
        assert run(args) == 0
        out = capsys.readouterr().out
    else:
        cmd = [str(CONSOLE)] if entry == "console" else [sys.executable, "-m", "labwright"]
        done = subprocess.run(
            [*cmd, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, check=True
        )
        out = done.stdout
    assert without_timings(json.loads(out)) == golden("transfers_96", ".json")


@pytest.mark.parametrize("name", PROTOCOLS)
def test_the_text_for_a_person_is_as_before(name: str) -> None:
    done = labwright("simulate", str(PROTOCOLS[name]), "--config", str(LAB))
    assert done.returncode == 0, done.stderr
    assert words(done.stdout) == words(golden(name, ".txt"))


def test_a_deck_built_by_pylabrobot_simulates_as_the_cached_one(tmp_path: Path) -> None:
    done = labwright(
        "simulate",
        str(PROTOCOLS["transfers_96"]),
        "--config",
        str(LAB),
        "--json",
        env={"XDG_CACHE_HOME": str(tmp_path)},  # nothing cached: the deck comes from PyLabRobot
    )
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.glob("labwright/*.json"))  # it was built, and cached for next time
    assert without_timings(json.loads(done.stdout)) == golden("transfers_96", ".json")


def test_simulate_imports_nothing_of_the_cli_or_the_agents() -> None:
    modules = modules_imported_by("simulate", *JSON_96)
    # (importlib.import_module, how labwright.entry reaches labwright.simulating, is not logged)
    assert "device_servers.lab" in modules and "device_servers.liquid_handler.twin" in modules
    found = sorted(
        m
        for m in modules
        if m.split(".")[0] in NOT_ON_THE_SIMULATE_PATH or m.startswith("labwright.cli")
    )
    assert found == []


@pytest.mark.parametrize(
    "args",
    [
        [],  # no protocol
        ["p.yaml", "--bogus"],
        ["p.yaml", "--config"],  # an option without its value
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str]) -> None:
    for cmd in ([str(CONSOLE)], [sys.executable, "-m", "labwright"]):
        done = subprocess.run(
            [*cmd, "simulate", *args], capture_output=True, text=True, timeout=60, cwd=ROOT
        )
        assert done.returncode == 2
        assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1
        assert "Traceback" not in done.stderr and done.stdout == ""


def test_help_lists_the_options_once_for_every_entry(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["simulate", "--help"]) == 0
    in_process = capsys.readouterr().out
    done = subprocess.run(
        [str(CONSOLE), "simulate", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert done.stdout == in_process
    for option in ("--config", "--instrument", "--json"):
        assert option in in_process
