"""What servers send is the contract's typed wire models: errors are ErrorInfo with a Code,
commands CommandResult, runs RunInfo and their events Event; every server has COMMON_TOOLS."""

from __future__ import annotations

import pytest
from _lh import wait_for_run
from conftest import call
from mcp import ClientSession

from device_servers.contract import (
    COMMON_TOOLS,
    Code,
    CommandResult,
    ErrorInfo,
    Event,
    RunInfo,
)
from device_servers.kind import kinds

pytestmark = pytest.mark.anyio


async def test_a_server_lists_the_common_tools_then_its_kinds_commands(
    session: ClientSession,
) -> None:
    names = [t.name for t in (await session.list_tools()).tools]
    assert tuple(names[: len(COMMON_TOOLS)]) == COMMON_TOOLS
    assert set(names[len(COMMON_TOOLS) :]) == set(
        kinds()["liquid_handler"].driver_class().command_set
    )


def test_no_kind_names_a_command_like_a_common_tool() -> None:
    for kind in kinds().values():
        assert not set(kind.driver_class().command_set) & set(COMMON_TOOLS), kind.name


async def test_a_refused_call_is_an_error_info_with_a_code(session: ClientSession) -> None:
    payload = await call(session, "aspirate", labware="nope", wells=["A1"], volume_ul=10)
    info = ErrorInfo.of(payload)
    assert info is not None and info.code is Code.UNKNOWN_LABWARE
    assert info.fix_hint


async def test_a_dry_run_is_a_command_result(session: ClientSession) -> None:
    payload = await call(session, "pick_up_tips", rack="tips_1")
    result = CommandResult.model_validate(payload)
    assert result.dry_run and result.simulated and result.operations == 1
    assert ErrorInfo.of(payload) is None


async def test_runs_and_their_events_are_run_info_and_events(session: ClientSession) -> None:
    protocol = {"name": "one", "steps": [{"command": "pick_up_tips", "args": {"rack": "tips_1"}}]}
    started = await call(session, "start_run", protocol=protocol)
    info = await wait_for_run(session, started["run_id"])
    run = RunInfo.model_validate(info)
    assert run.status == "completed" and run.steps_done == 1
    page = await call(session, "run_events", run_id=run.run_id)
    events = [Event.model_validate(e) for e in page["events"]]
    assert events[-1].type == "protocol_completed"


def test_an_unreadable_error_is_an_adapter_fault_not_a_crash() -> None:
    info = ErrorInfo.of({"ok": False, "error": {"code": "NOT_A_CODE"}})
    assert info is not None and info.code is Code.ADAPTER_FAULT
    assert ErrorInfo.of({"ok": False}) is not None
