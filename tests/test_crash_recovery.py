"""Crashes of the real server process: at most once per action_id, in-doubt actions reported,
stale until read back, durable run history. Judged from the simulated world and the ledger."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from _servers import HttpServer, http_session, stdio_session
from conftest import write_lab
from mcp import ClientSession
from mcp.shared.exceptions import McpError

from device_servers.lab import LabConfig, load
from device_servers.sim.world import SimWorld
from state_store import connect

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def call(session: ClientSession, tool: str, **args: Any) -> dict[str, Any]:
    with anyio.fail_after(30):
        result = await session.call_tool(tool, args)
    payload = result.structuredContent
    assert payload is not None, f"{tool} returned no structured content"
    assert bool(result.isError) == (payload["ok"] is False)
    return dict(payload)


def code(payload: dict[str, Any]) -> str:
    assert payload["ok"] is False, payload
    return str(payload["error"]["code"])


async def all_events(session: ClientSession, run_id: str) -> list[dict[str, Any]]:
    """A run's whole history, page by page, as a reconnecting client rebuilds it."""
    events: list[dict[str, Any]] = []
    since = 0
    for _ in range(1000):
        page = await call(session, "run_events", run_id=run_id, since_seq=since, max=50)
        assert page["ok"], page
        if not page["events"]:
            return events
        events.extend(page["events"])
        since = page["next_seq"]
    raise AssertionError(f"run_events of {run_id} never ended")


def assert_interrupted_history(events: list[dict[str, Any]]) -> None:
    """The run's history ends with the restart's undefined error. Only a read back may add to
    it: operations that happened before the kill but whose record died with the process come
    after the error, each marked ``late``."""
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    errors = [i for i, e in enumerate(events) if e["type"] == "error"]
    assert errors, [e["type"] for e in events[-5:]]
    error = events[errors[-1]]
    assert error["data"]["code"] in ("ACTION_IN_DOUBT", "CONNECTION_LOST")
    assert error["data"]["defined"] is False
    after = events[errors[-1] + 1 :]
    assert all(e["data"].get("late") is True for e in after), [e["type"] for e in after]


def ledger(lab: LabConfig) -> dict[str, dict[str, Any]]:
    conn = connect(lab.db_path)
    try:
        rows = conn.execute(
            "SELECT * FROM actions WHERE instrument='lh1' ORDER BY started_at"
        ).fetchall()
        return {r["action_id"]: dict(r) for r in rows}
    finally:
        conn.close()


def _run_status(lab: LabConfig, run_id: str) -> str:
    conn = connect(lab.db_path)
    try:
        row = conn.execute("SELECT status FROM device_runs WHERE run_id=?", (run_id,)).fetchone()
        return str(row["status"])
    finally:
        conn.close()


TRANSFER = {
    "source": "reservoir",
    "source_well": "A1",
    "destination": "plate_1",
    "destination_wells": ["A1"],
    "volume_ul": 50,
}


# ---------------------------------------------------------------------------- deterministic


async def test_a_crash_mid_transfer_is_in_doubt_until_read_back_then_completes_without_repeats(
    tmp_path: Path,
) -> None:
    lab_file = write_lab(tmp_path)
    lab = load(lab_file)
    world = SimWorld(lab.world_path)
    # Ops of one transfer: 1 pick, 2 aspirate, 3 dispense, 4 drop. Die right after the dispense.
    world.add_fault("lh1", {"kind": "crash", "at_op": 3, "params": {"after_effect": True}})
    errlog = (tmp_path / "server.err").open("w")
    try:
        await _crash_then_recover(lab_file, errlog, world)
    finally:
        errlog.close()
    assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50)  # exactly once
    assert world.well("plate_1", "A2")["volume_ul"] == pytest.approx(50)
    dispenses = Counter(op["well"] for op in world.physical_ops("lh1") if op["op"] == "dispense")
    assert dispenses == {"A1": 1, "A2": 1}
    statuses = {a: e["status"] for a, e in ledger(lab).items()}
    assert statuses == {"t-1": "done", "t-3": "done"}


async def _crash_then_recover(lab_file: Path, errlog: IO[str], world: SimWorld) -> None:
    async with stdio_session(lab_file, errlog) as session:
        with pytest.raises(McpError), anyio.fail_after(30):
            await session.call_tool("transfer", {**TRANSFER, "dry_run": False, "action_id": "t-1"})
    assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50)
    ops_at_crash = world.physical_ops("lh1")
    assert [op["op"] for op in ops_at_crash] == ["pick", "aspirate", "dispense"]

    async with stdio_session(lab_file, errlog) as session:
        state = (await call(session, "get_state"))["state"]
        assert state["stale"]
        assert state["in_doubt"] == ["t-1"]

        again = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
        assert code(again) == "ACTION_IN_DOUBT"
        assert again["error"]["defined"] is False and again["error"]["retriable"] is False

        other = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-2")
        assert code(other) == "STATE_STALE"
        drop = await call(session, "drop_tips", dry_run=False, action_id="drop-1")
        assert code(drop) == "STATE_STALE"

        back = await call(session, "read_back")
        assert back["ok"] and back["was_stale"] and back["stale"] is None
        assert back["in_doubt_actions"] == ["t-1"]
        assert back["state"]["labware"]["plate_1"]["wells"]["A1"]["volume_ul"] == pytest.approx(50)

        # The read back tells exactly how far the action got: 3 of its 4 operations (pick,
        # aspirate, dispense) happened. Asked again under the same id, it sends only the rest.
        assert back["resumable"] == {"t-1": {"done": 3, "of": 4}}
        done = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
        assert done["ok"] is True
        assert [op["op"] for op in world.physical_ops("lh1")] == [
            "pick",
            "aspirate",
            "dispense",
            "drop",
        ]
        # Once completed, the id answers with the recorded outcome: nothing is sent again.
        replay = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
        assert replay["replayed"] is True
        fresh = {**TRANSFER, "destination_wells": ["A2"]}
        assert (await call(session, "transfer", **fresh, dry_run=False, action_id="t-3"))["ok"]


def _run_of_transfers(wells: list[str], destination: str, volume: float) -> dict[str, Any]:
    return {
        "name": f"{len(wells)} transfers",
        "steps": [
            {
                "command": "transfer",
                "args": {
                    "source": "reservoir",
                    "source_well": "A1",
                    "destination": destination,
                    "destination_wells": [w],
                    "volume_ul": volume,
                },
            }
            for w in wells
        ],
    }


async def test_a_run_interrupted_by_a_crash_keeps_its_full_history_and_reports_interrupted(
    tmp_path: Path,
) -> None:
    lab_file = write_lab(tmp_path)
    lab = load(lab_file)
    world = SimWorld(lab.world_path)
    # Step 1's ops are 5..8; die right after its dispense (op 7). The other ops are slowed so
    # start_run's answer is out before the crash (faults fire first-added first).
    world.add_fault("lh1", {"kind": "crash", "at_op": 7, "params": {"after_effect": True}})
    world.add_fault("lh1", {"kind": "delay", "times": -1, "params": {"seconds": 0.05}})
    log = tmp_path / "server.log"

    server = HttpServer(lab_file, log)
    try:
        server.wait_ready()
        async with http_session(server.url) as session:
            started = await call(
                session,
                "start_run",
                protocol=_run_of_transfers(["A1", "A2", "A3"], "plate_1", 40),
                dry_run=False,
                run_key="crashing-run",
            )
            assert started["ok"] and started["status"] == "pending"
        run_id = started["run_id"]
        assert server.proc.wait(timeout=30) == 137
    finally:
        server.kill()

    server = HttpServer(lab_file, log)
    try:
        server.wait_ready()
        async with http_session(server.url) as session:
            run = await call(session, "get_run", run_id=run_id)
            assert run["status"] == "interrupted"
            assert run["error"]["code"] == "ACTION_IN_DOUBT"
            events = await all_events(session, run_id)
            assert_interrupted_history(events)
            assert [e["type"] for e in events if e["type"].startswith("step_")] == [
                "step_started",
                "step_completed",
                "step_started",
            ]
            assert events[-1]["data"]["action_id"] == f"{run_id}.1"
            assert (await call(session, "get_state"))["state"]["in_doubt"] == [f"{run_id}.1"]

            # Asking for the same run again gives the same, interrupted run: never a second one.
            same = await call(
                session,
                "start_run",
                protocol=_run_of_transfers(["A1", "A2", "A3"], "plate_1", 40),
                dry_run=False,
                run_key="crashing-run",
            )
            assert same["run_id"] == run_id and same["status"] == "interrupted"
            # And its in-doubt step, asked for directly under its action_id, is refused.
            step = _run_of_transfers(["A2"], "plate_1", 40)["steps"][0]["args"]
            redo = await call(session, "transfer", **step, dry_run=False, action_id=f"{run_id}.1")
            assert code(redo) == "ACTION_IN_DOUBT"
    finally:
        server.stop()

    volumes = [world.well("plate_1", w)["volume_ul"] for w in ("A1", "A2", "A3")]
    assert volumes == pytest.approx([40, 40, 0])
    statuses = {a: e["status"] for a, e in ledger(lab).items()}
    assert statuses == {f"{run_id}.0": "done", f"{run_id}.1": "in_doubt"}


# ---------------------------------------------------------------------------- kill -9

KILLS = 5
STEPS = 24
VOLUME = 20.0
DEST_PLATES = ("dest_1", "dest_2")


def _kill_lab(lab: dict[str, Any]) -> None:
    inst = lab["instruments"][0]
    inst["labware"] += [
        {
            "id": "tips_2",
            "type": "hamilton_96_tiprack_300uL",
            "carrier": "tip_carrier",
            "slot": 1,
        },
        {
            "id": "dest_1",
            "type": "cor_96_wellplate_360uL_Fb",
            "carrier": "plate_carrier",
            "slot": 2,
        },
        {
            "id": "dest_2",
            "type": "cor_96_wellplate_360uL_Fb",
            "carrier": "plate_carrier",
            "slot": 3,
        },
    ]


def _targets() -> list[tuple[str, str]]:
    """(plate, well) of every transfer of every cycle, each used once."""
    rows, cols = "ABCDEFGH", range(1, 13)
    wells = [(p, f"{r}{c}") for p in DEST_PLATES for r in rows for c in cols]
    return wells[: KILLS * STEPS]


def _cycle_protocol(targets: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "name": "kill me",
        "steps": [
            {
                "command": "transfer",
                "args": {
                    "source": "reservoir",
                    "source_well": "A1",
                    "destination": plate,
                    "destination_wells": [well],
                    "volume_ul": VOLUME,
                },
            }
            for plate, well in targets
        ],
    }


async def _recover(session: ClientSession, cycle: int, runs: list[str]) -> None:
    """What an operator does after a restart: read back, review, clear the channel."""
    state = (await call(session, "get_state"))["state"]
    assert state["stale"]
    blocked = await call(session, "drop_tips", dry_run=False, action_id=f"recover-{cycle}")
    assert code(blocked) == "STATE_STALE"
    back = await call(session, "read_back")
    assert back["ok"] and back["stale"] is None
    for run_id in runs:
        assert (await call(session, "get_run", run_id=run_id))["status"] == "interrupted"
        assert_interrupted_history(await all_events(session, run_id))
    if any(ch["tip"] for ch in back["state"]["channels"]):
        dropped = await call(session, "drop_tips", dry_run=False, action_id=f"recover-{cycle}")
        assert dropped["ok"], dropped


def _owner(actions: list[dict[str, Any]], ts: float) -> dict[str, Any]:
    """The action being executed when a physical op happened (actions run one at a time)."""
    started = [a for a in actions if a["started_at"] <= ts]
    assert started, f"a physical op at {ts} happened before any action was recorded"
    return started[-1]


async def test_sigkill_at_random_points_never_repeats_an_action_and_keeps_history(
    tmp_path: Path,
) -> None:
    lab_file = write_lab(tmp_path, _kill_lab)
    lab = load(lab_file)
    world = SimWorld(lab.world_path)
    world.add_fault("lh1", {"kind": "delay", "times": -1, "params": {"seconds": 0.03}})
    rng = random.Random(7_2024)
    targets = _targets()
    log = tmp_path / "server.log"
    runs: list[str] = []
    kills_mid_run = 0

    for cycle in range(KILLS):
        server = HttpServer(lab_file, log)
        try:
            server.wait_ready()
            async with http_session(server.url) as session:
                if cycle:
                    await _recover(session, cycle, runs)
                started = await call(
                    session,
                    "start_run",
                    protocol=_cycle_protocol(targets[cycle * STEPS : (cycle + 1) * STEPS]),
                    dry_run=False,
                    run_key=f"kill-cycle-{cycle}",
                )
                assert started["ok"], started
                runs.append(started["run_id"])
            await anyio.sleep(rng.uniform(0.1, 2.5))  # the random kill point is the test input
            server.kill()
            assert server.proc.returncode == -9
            kills_mid_run += _run_status(lab, runs[-1]) == "running"
        finally:
            server.kill()

    server = HttpServer(lab_file, log)
    try:
        server.wait_ready()
        async with http_session(server.url) as session:
            await _recover(session, KILLS, runs)
    finally:
        server.stop()
    assert kills_mid_run == KILLS

    # ---- judged from the world and the ledger, never from what the server said
    actions = sorted(ledger(lab).values(), key=lambda a: a["started_at"])
    ops = world.physical_ops("lh1")
    by_action: dict[str, Counter[str]] = {a["action_id"]: Counter() for a in actions}
    dispensed_to: dict[str, list[tuple[str, str]]] = {a["action_id"]: [] for a in actions}
    for op in ops:
        owner = _owner(actions, op["ts"])
        by_action[owner["action_id"]][op["op"]] += 1
        if op["op"] == "dispense":
            dispensed_to[owner["action_id"]].append((op["labware"], op["well"]))

    assert {a["status"] for a in actions} <= {"done", "in_doubt"}
    in_doubt = [a for a in actions if a["status"] == "in_doubt"]
    assert len(in_doubt) <= KILLS
    done_transfers = 0
    for a in actions:
        seen = by_action[a["action_id"]]
        assert all(n <= 1 for n in seen.values()), (a["action_id"], seen)  # never twice
        if a["command"] == "transfer":
            args = json.loads(a["args"])
            target = (args["destination"], args["destination_wells"][0])
            assert dispensed_to[a["action_id"]] in ([], [target])
            if a["status"] == "done":
                done_transfers += 1
                assert seen == {"pick": 1, "aspirate": 1, "dispense": 1, "drop": 1}
        else:
            assert a["command"] == "drop_tips" and set(seen) <= {"drop"}
    assert done_transfers >= KILLS  # every cycle got somewhere before its kill

    dispenses = Counter((op["labware"], op["well"]) for op in ops if op["op"] == "dispense")
    for plate, well in targets:
        volume = world.well(plate, well)["volume_ul"]
        assert volume == pytest.approx(0) or volume == pytest.approx(VOLUME), (plate, well)
        assert (volume > 0) == (dispenses[(plate, well)] == 1)
    assert max(dispenses.values()) == 1

    tips_left = sum(sum(world.tips(rack).values()) for rack in ("tips_1", "tips_2"))
    picks = sum(op["op"] == "pick" for op in ops)
    assert 192 - tips_left == picks
    assert not any(ch["tip"] for ch in world.channels("lh1"))
    assert not [i for i in world.incidents("lh1") if i["kind"] == "overflow"]
