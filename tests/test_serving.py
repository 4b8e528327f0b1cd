"""`labwright serve` (labwright.serving): a lean start, one server per instrument.

Real server processes: what a server imports is read from ``python -X importtime`` of a
whole server life (start, open the instrument, serve, stdin closed, exit).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from conftest import ROOT, labwright, modules_imported_by, write_lab

from agents.device.agent import structured
from agents.mcp_client import client_for
from device_servers.lab import load

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

# Nothing of the command line, the task agent, the MCP client or FastMCP on a server's path;
# over stdio no HTTP client or web framework either.
NOT_ON_THE_SERVER_PATH = (
    "typer",
    "rich",
    "click",
    "httpx",
    "starlette",
    "uvicorn",
    "sqlite_utils",
    "mcp.client",
    "mcp.server.fastmcp",
    "langgraph",
    "langchain_core",
    "agents",
    "labwright.cli",
)


def imported_by_a_server_life(lab_file: Path) -> set[str]:
    return modules_imported_by("serve", "lh1", "-c", str(lab_file))


def test_a_server_imports_what_serving_needs_and_nothing_of_the_cli_or_the_agents(
    tmp_path: Path,
) -> None:
    modules = imported_by_a_server_life(write_lab(tmp_path))
    assert "device_servers.server" in modules and "mcp.server.lowlevel.server" in modules
    found = sorted(m for m in modules if m.startswith(NOT_ON_THE_SERVER_PATH))
    assert found == []


async def test_a_second_server_for_the_same_instrument_is_refused_while_the_first_runs(
    tmp_path: Path,
) -> None:
    lab_file = write_lab(tmp_path)
    lab = load(lab_file)
    client = client_for(list(lab.instruments), lab_file)
    with anyio.fail_after(60):
        async with client.session("lh1") as session:  # the first server, over stdio
            assert structured(await session.call_tool("get_state", {}))["ok"] is True
            second = await anyio.to_thread.run_sync(
                lambda: labwright(
                    "serve", "lh1", "-c", str(lab_file), "--lock-wait", "0.5", input=""
                )
            )
            assert second.returncode == 2 and "already served" in second.stderr
            assert "Traceback" not in second.stderr
            # Another state directory is another lab: it may serve its own lh1.
            elsewhere = await anyio.to_thread.run_sync(
                lambda: labwright(
                    "serve",
                    "lh1",
                    "-c",
                    str(lab_file),
                    input="",
                    env={"LABWRIGHT_STATE_DIR": str(tmp_path / "other")},
                )
            )
            assert elsewhere.returncode == 0, elsewhere.stderr
            # A server started while the first is ending (its client gone) waits, then serves.
            waiting = subprocess.Popen(
                [sys.executable, "-m", "labwright", "serve", "lh1", "-c", str(lab_file)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=ROOT,
            )
            assert waiting.stderr is not None
            told = await anyio.to_thread.run_sync(waiting.stderr.readline)
            assert told.decode().startswith("lh1: waiting up to 10 s for process")
    # The first server's client has gone: it ends, and the waiting one takes over.
    _, err = await anyio.to_thread.run_sync(lambda: waiting.communicate(b"", timeout=60))
    assert waiting.returncode == 0, err.decode()


def test_serve_options_are_one_definition_for_the_command_and_python_m(tmp_path: Path) -> None:
    lab_file = write_lab(tmp_path)
    script = Path(sys.executable).parent / "labwright"  # the typer command forwards to it
    by_module = labwright("serve", "--help")
    by_command = subprocess.run(
        [str(script), "serve", "--help"], capture_output=True, text=True, timeout=60
    )
    assert by_module.returncode == by_command.returncode == 0
    assert by_module.stdout == by_command.stdout
    assert "usage: labwright serve" in by_module.stdout
    for flag in (
        "--transport",
        "--host",
        "--port",
        "--token",
        "--allow-origin",
        "--allow-host",
        "--tls-cert",
        "--tls-key",
        "--lock-wait",
    ):
        assert flag in by_module.stdout
    bad = labwright("serve", "lh1", "-c", str(lab_file), "--transport", "pigeon")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --transport")
    unknown = labwright("serve", "lh9", "-c", str(lab_file))
    assert unknown.returncode == 2 and "lh9" in unknown.stderr and "Traceback" not in unknown.stderr
