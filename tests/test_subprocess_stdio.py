"""The real ``labwright serve`` entry point, spoken to over stdio by the official MCP client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from _servers import StdioTrace, stdio_session, tool_names
from conftest import write_lab

from device_servers.lab import load
from device_servers.sim.world import SimWorld

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# DESIGN.md section 3: every device server has these, the liquid handler its commands.
EVERY_TOOL = {
    "get_state",
    "read_back",
    "start_run",
    "run_events",
    "get_run",
    "cancel_run",
    "emergency_stop",
    "reset_estop",
    "pick_up_tips",
    "drop_tips",
    "aspirate",
    "dispense",
    "transfer",
    "mix",
}


def _payload(result: Any) -> dict[str, Any]:
    assert result.structuredContent is not None
    assert json.loads(result.content[0].text) == result.structuredContent
    return dict(result.structuredContent)


async def test_stdio_server_lists_its_tools_and_a_transfer_changes_the_world(
    tmp_path: Path,
) -> None:
    lab_file = write_lab(tmp_path)
    trace = StdioTrace()
    with (tmp_path / "server.err").open("w") as errlog:
        async with stdio_session(lab_file, errlog, trace) as session:
            with anyio.fail_after(30):
                listed = await session.list_tools()
                assert tool_names(listed) >= EVERY_TOOL  # the contract's tools, at least
                assert all(t.inputSchema["type"] == "object" for t in listed.tools)
                result = await session.call_tool(
                    "transfer",
                    {
                        "source": "reservoir",
                        "source_well": "A1",
                        "destination": "plate_1",
                        "destination_wells": ["A1"],
                        "volume_ul": 50,
                        "dry_run": False,
                        "action_id": "stdio-transfer-1",
                    },
                )
                done = _payload(result)
                assert not result.isError and done["ok"] and done["dry_run"] is False
                state = _payload(await session.call_tool("get_state", {}))["state"]
    lab = load(lab_file)
    world = SimWorld(lab.world_path)
    assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50)
    assert world.well("reservoir", "A1")["volume_ul"] == pytest.approx(9950)
    assert [op["op"] for op in world.physical_ops("lh1")] == [
        "pick",
        "aspirate",
        "dispense",
        "drop",
    ]
    assert state["labware"]["plate_1"]["wells"]["A1"]["volume_ul"] == pytest.approx(50)
    assert trace.garbage == []


def _chatterbox(lab: dict[str, Any]) -> None:
    inst = lab["instruments"][0]
    inst["backend"] = {
        "type": "pylabrobot",
        "class_path": "pylabrobot.liquid_handling.backends.chatterbox."
        "LiquidHandlerChatterboxBackend",
    }
    inst["allow_execution"] = True


async def test_stdout_carries_only_mcp_while_the_pylabrobot_backend_prints(
    tmp_path: Path,
) -> None:
    lab_file = write_lab(tmp_path, _chatterbox)
    trace = StdioTrace()
    err_path = tmp_path / "server.err"
    with err_path.open("w") as errlog:
        async with stdio_session(lab_file, errlog, trace) as session:
            with anyio.fail_after(30):
                result = await session.call_tool(
                    "pick_up_tips",
                    {"rack": "tips_1", "dry_run": False, "action_id": "chatty-pick-1"},
                )
                picked = _payload(result)
                assert not result.isError and picked["ok"] and picked["simulated"] is False
                state = _payload(await session.call_tool("get_state", {}))
                assert state["ok"]
    printed = err_path.read_text()
    assert "Setting up the liquid handler" in printed  # the backend did print ...
    assert "Picking up tips" in printed  # ... and it went to stderr
    assert trace.garbage == []  # ... never into the MCP stream
