"""An instrument-level approval is a record of exactly what a person saw: bound to the call
(command, canonical arguments, their hash), to the state it was asked in (the e-stop a reset
would clear, the twin a confirmation vouches for), immutable while pending, granted only by
a person allowed to approve, single-use, void when its state no longer holds, and kept in
the audit log with the person's name. Every executed action, approval step, e-stop and reset
is an audit row of the server, whatever client sent it."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from _servers import stdio_session
from conftest import call, error_code, write_lab
from mcp import ClientSession
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import load
from device_servers.runtime import InstrumentRuntime
from device_servers.server import build_server
from device_servers.sim.world import SimWorld
from labwright.cli import run
from state_store import Approvals, AuditLog, People, connect

pytestmark = pytest.mark.anyio
HS = "hs1"


@contextlib.asynccontextmanager
async def served(
    tmp_path: Path, instrument: str = HS, **fields: Any
) -> AsyncIterator[tuple[ClientSession, InstrumentRuntime, Path]]:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"].append({"id": HS, "kind": "heater_shaker", "time_scale": 600})
        for inst in data["instruments"]:
            if inst["id"] == instrument:
                inst.update(fields)

    lab_file = write_lab(tmp_path, patch)
    lab = load(lab_file)
    async with (
        open_runtime(lab.instrument(instrument), lab.db_path, lab.world_path) as rt,
        create_connected_server_and_client_session(build_server(rt)) as session,
    ):
        yield session, rt, lab_file


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = run(list(argv))
    return status, out.getvalue(), err.getvalue()


def approve(lab_file: Path, instrument: str, action_id: str, *extra: str) -> tuple[int, str]:
    status, out, err = cli(
        "approve-action", instrument, action_id, "--config", str(lab_file), *extra
    )
    return status, out + err


def heat(action_id: str, celsius: float) -> dict[str, Any]:
    return {"celsius": celsius, "dry_run": False, "action_id": action_id}


def audit_rows(lab_file: Path, run_id: str) -> list[Any]:
    return AuditLog(connect(load(lab_file).db_path)).entries(run_id)


# --------------------------------------------------------------------------- substitution


async def test_a_pending_approval_cannot_be_swapped_for_other_arguments(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, lab_file):
        assert error_code(await call(s, "set_temperature", **heat("A", 65))) == "APPROVAL_REQUIRED"
        swapped = await call(s, "set_temperature", **heat("A", 79))
        assert error_code(swapped) == "ACTION_ID_REUSED"
        _, out, _ = cli("approvals", "--json", "--config", str(lab_file))
        [shown] = json.loads(out)
        assert (shown["action_id"], shown["command"], shown["args"]) == (
            "A",
            "set_temperature",
            {"celsius": 65.0},
        )
        assert shown["args_hash"] and shown["requested_by"].startswith("client:")
        assert approve(lab_file, HS, "A", "--hash", shown["args_hash"][:12])[0] == 0
        assert error_code(await call(s, "set_temperature", **heat("A", 79))) == "ACTION_ID_REUSED"
        done = await call(s, "set_temperature", **heat("A", 65))
        assert done["ok"] is True
        assert SimWorld(load(lab_file).world_path).status(HS)["target_c"] == 65


async def test_approving_with_the_hash_of_other_arguments_is_refused(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, lab_file):
        await call(s, "set_temperature", **heat("A", 65))
        status, text = approve(lab_file, HS, "A", "--hash", "0" * 12)
        assert status == 2 and "not the" in text
        assert [p.status for p in Approvals(connect(load(lab_file).db_path)).history(HS, "A")] == [
            "pending"
        ]


async def test_an_approval_is_single_use_and_every_step_is_audited(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, lab_file):
        await call(s, "set_temperature", **heat("A", 65))
        approve(lab_file, HS, "A")
        assert (await call(s, "set_temperature", **heat("A", 65)))["ok"] is True
        replay = await call(s, "set_temperature", **heat("A", 65))
        assert replay["ok"] is True and replay.get("replayed") is True  # the ledger's answer
        [record] = Approvals(connect(load(lab_file).db_path)).history(HS, "A")
        assert record.status == "used" and record.decided_by and record.used_at
        tools = [e.tool for e in audit_rows(lab_file, HS)]
        assert tools[:3] == ["approval_asked", "approval_granted", "approval_used"]
        assert "set_temperature" in tools  # the executed action, written by the server
        granted = next(e for e in audit_rows(lab_file, HS) if e.tool == "approval_granted")
        assert granted.agent.startswith("local:") and granted.args["args"] == {"celsius": 65.0}


async def test_only_a_person_allowed_to_approve_can_grant(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, lab_file):
        people = People(connect(load(lab_file).db_path))
        viewer, approver = people.add("vera", "viewer"), people.add("alice", "approver")
        await call(s, "set_temperature", **heat("A", 65))
        assert approve(lab_file, HS, "A", "--token", viewer)[0] == 2
        assert approve(lab_file, HS, "A", "--token", "lw_not-a-token")[0] == 2
        assert approve(lab_file, HS, "A", "--token", approver)[0] == 0
        assert (await call(s, "set_temperature", **heat("A", 65)))["ok"] is True
        [record] = Approvals(connect(load(lab_file).db_path)).history(HS, "A")
        assert record.decided_by == "alice (approver)"


async def test_a_refused_approval_never_runs_under_that_action_id(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, lab_file):
        await call(s, "set_temperature", **heat("A", 65))
        assert approve(lab_file, HS, "A", "--refuse", "--note", "too hot for this plate")[0] == 0
        assert error_code(await call(s, "set_temperature", **heat("A", 65))) == "POLICY_DENIED"
        assert SimWorld(load(lab_file).world_path).status(HS).get("target_c") is None


# --------------------------------------------------------------------------- e-stop resets


async def test_a_reset_cannot_be_asked_for_while_nothing_is_latched(tmp_path: Path) -> None:
    async with served(tmp_path, "lh1") as (s, _, lab_file):
        assert error_code(await call(s, "reset_estop", action_id="R")) == "PRECONDITION_FAILED"
        assert Approvals(connect(load(lab_file).db_path)).pending() == []
        await call(s, "emergency_stop")
        assert error_code(await call(s, "reset_estop", action_id="R")) == "APPROVAL_REQUIRED"


async def test_an_approved_reset_clears_only_the_estop_it_was_asked_for(tmp_path: Path) -> None:
    async with served(tmp_path, "lh1") as (s, rt, lab_file):
        await call(s, "emergency_stop")  # latch A
        await call(s, "reset_estop", action_id="R")
        approve(lab_file, "lh1", "R")  # approved for A, kept unused
        await call(s, "reset_estop", action_id="Q")
        approve(lab_file, "lh1", "Q")
        assert (await call(s, "reset_estop", action_id="Q"))["ok"] is True  # A cleared by Q
        await call(s, "emergency_stop")  # latch B
        assert error_code(await call(s, "reset_estop", action_id="R")) == "APPROVAL_REQUIRED"
        assert rt.estop is True
        history = Approvals(connect(load(lab_file).db_path)).history("lh1", "R")
        assert [r.status for r in history] == ["void", "pending"]
        assert "approval_voided" in [e.tool for e in audit_rows(lab_file, "lh1")]


async def test_with_execution_disabled_a_reset_can_still_be_approved(tmp_path: Path) -> None:
    async with served(tmp_path, "lh1", allow_execution=False) as (s, rt, lab_file):
        await call(s, "emergency_stop")
        assert error_code(await call(s, "reset_estop", action_id="R")) == "APPROVAL_REQUIRED"
        approve(lab_file, "lh1", "R")
        assert (await call(s, "reset_estop", action_id="R"))["ok"] is True
        assert rt.estop is False


async def test_a_confirmation_is_not_spent_by_a_call_refused_during_an_estop(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, "lh1") as (s, _, lab_file):
        assert error_code(await call(s, "confirm_state", action_id="C")) == "APPROVAL_REQUIRED"
        approve(lab_file, "lh1", "C")
        await call(s, "emergency_stop")
        assert error_code(await call(s, "confirm_state", action_id="C")) == "ESTOP_ACTIVE"
        await call(s, "reset_estop", action_id="R")
        approve(lab_file, "lh1", "R")
        assert (await call(s, "reset_estop", action_id="R"))["ok"] is True
        confirmed = await call(s, "confirm_state", action_id="C")
        assert confirmed["ok"] is True and confirmed["stale"] is None


async def test_estops_and_resets_are_audited_with_who_and_which_latch(tmp_path: Path) -> None:
    async with served(tmp_path, "lh1") as (s, rt, lab_file):
        await call(s, "emergency_stop", reason="smoke")
        latch = rt.status.estop_latch
        await call(s, "reset_estop", action_id="R")
        approve(lab_file, "lh1", "R")
        await call(s, "reset_estop", action_id="R")
        rows = {e.tool: e for e in audit_rows(lab_file, "lh1")}
        assert rows["emergency_stop"].args == {"reason": "smoke"}
        assert rows["emergency_stop"].agent.startswith("client:")
        assert rows["reset_estop"].result["estop_latch"] == latch
        assert rows["reset_estop"].result["by"].startswith("local:")
        assert AuditLog(connect(load(lab_file).db_path)).verify().ok


async def test_a_direct_mcp_action_is_audited_by_the_server(tmp_path: Path) -> None:
    async with served(tmp_path, "lh1") as (s, _, lab_file):
        done = await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="p-1")
        assert done["ok"] is True
        [row] = [e for e in audit_rows(lab_file, "lh1") if e.tool == "pick_up_tips"]
        assert row.args["action_id"] == "p-1" and row.args["rack"] == "tips_1"
        assert row.result["ok"] is True and row.agent.startswith("client:")


async def test_an_audited_action_keeps_its_state_by_the_hash_of_the_ledger_answer(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, "lh1") as (s, _, lab_file):
        done = await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="p-1")
        [row] = [e for e in audit_rows(lab_file, "lh1") if e.tool == "pick_up_tips"]
        conn = connect(load(lab_file).db_path)
        [(answer,)] = conn.execute("SELECT result FROM actions WHERE action_id = 'p-1'")
        recorded = json.loads(answer)["state"]
        assert recorded == json.loads(json.dumps(done["state"]))  # the ledger holds it whole
        text = json.dumps(recorded, sort_keys=True, separators=(",", ":"))
        digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        assert row.state_after == {"ledger_state": digest}  # by reference, not a second copy
        assert AuditLog(conn).verify().ok


# --------------------------------------------------------------------------- crash


@pytest.mark.slow
async def test_after_a_crash_the_operation_just_before_the_kill_gets_its_event(
    tmp_path: Path,
) -> None:
    def patch(data: dict[str, Any]) -> None:
        crash = {"kind": "crash", "at_op": 1, "params": {"after_effect": True}}
        data["instruments"][0]["faults"] = [crash]

    lab_file = write_lab(tmp_path, patch)
    with open(tmp_path / "server.log", "w") as errlog:
        async with stdio_session(lab_file, errlog) as s:
            with pytest.raises(McpError), anyio.fail_after(30):  # the server dies
                await s.call_tool("pick_up_tips", {"rack": "tips_1", "dry_run": False,
                                                   "action_id": "p-1"})  # fmt: skip
        async with stdio_session(lab_file, errlog) as s:
            back = await call(s, "read_back")
            assert back["resumable"] == {"p-1": {"done": 1, "of": 1}}
            events = (await call(s, "run_events", run_id="lh1:direct", max=1000))["events"]
    picked = [e for e in events if e["type"] == "tip_picked_up"]
    assert len(picked) == 1 and picked[0]["data"]["late"] is True
    assert picked[0]["data"]["action_id"] == "p-1"
