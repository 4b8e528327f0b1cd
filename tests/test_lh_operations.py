"""Operation-level outcomes of liquid-handler commands, over real MCP sessions.

Every result and every failure says which operations happened (per well, per channel) and,
for a failure, the arguments that do exactly what is left; the server re-checks the source
before each aspiration and the room before each dispense; an e-stop or a cancel that cuts into
an operation is reported as such (never as a lost connection), and an operation whose outcome
was lost leaves the action in doubt until a read back, then completed under its own id.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from conftest import call, error_code
from test_estop_and_faults import approve, instrument_patch, served, wait_for_run

from device_servers.liquid_handler.commands import Mix, Primitive, Transfer
from device_servers.liquid_handler.progress import remainder, summary

pytestmark = pytest.mark.anyio

THREE = dict(
    source="reservoir",
    source_well="A1",
    destination="plate_1",
    destination_wells=["A1", "A2", "A3"],
    volume_ul=50,
    new_tip="always",
)


def dispensed(world: Any, well: str) -> int:
    return sum(
        1
        for op in world.physical_ops("lh1")
        if op["op"] == "dispense" and (op["labware"], op["well"]) == ("plate_1", well)
    )


async def wait_ops(world: Any, n: int) -> None:
    """Until the instrument has started its n-th operation (bounded)."""
    with anyio.fail_after(10):
        while True:
            row = world.conn.execute("SELECT n FROM op_counts WHERE instrument='lh1'").fetchone()
            if row is not None and row["n"] >= n:
                return
            await anyio.sleep(0.01)


async def test_a_failed_pick_up_at_the_second_well_reports_what_was_done_and_what_is_left(
    tmp_path: Any,
) -> None:
    async with served(tmp_path) as (s, _, world, _):
        world.add_fault("lh1", {"kind": "tip_pickup_fail", "at_op": 5, "match": {"op": "pick"}})
        failed = await call(s, "transfer", **THREE, dry_run=False, action_id="t-1")
        assert error_code(failed) == "NO_TIP"
        ops = failed["error"]["extra"]["progress"]
        assert (ops["done"], ops["of"], ops["next"]["status"]) == (4, 12, "failed")
        assert ops["summary"]["served"] == ["plate_1:A1"]
        assert ops["summary"]["not_served"] == ["plate_1:A2", "plate_1:A3"]
        rest = ops["remainder"]
        assert rest["destination_wells"] == ["A2", "A3"] and rest["first_done"] == 0
        spot = ops["next"]["well"]
        state = (await call(s, "get_state"))["state"]
        assert state["labware"]["tips_1"]["tips_failed"] == [spot]

        done = await call(s, "transfer", **rest, dry_run=False, action_id="t-1#2")
        assert done["ok"] is True
        assert done["progress"]["complete"] is True
        assert [dispensed(world, w) for w in ("A1", "A2", "A3")] == [1, 1, 1]
        picked = [op["well"] for op in world.physical_ops("lh1") if op["op"] == "pick"]
        assert spot not in picked and len(picked) == 3


async def test_the_source_is_re_checked_before_each_aspiration(tmp_path: Any) -> None:
    async with served(tmp_path) as (s, _, world, _):
        world.set_well("reservoir", "A1", 60.0)  # the twin still believes 10000 uL
        failed = await call(s, "transfer", **THREE, dry_run=False, action_id="t-1")
        assert error_code(failed) == "INSUFFICIENT_VOLUME"
        ops = failed["error"]["extra"]["progress"]
        assert ops["next"]["op"] == "aspirate" and ops["next"]["status"] == "refused"
        assert ops["summary"]["served"] == ["plate_1:A1"]
        assert ops["remainder"]["first_done"] == 1  # A2's tip is on the channel, unused
        assert world.incidents("lh1") == []  # stopped before the instrument had to catch it
        assert [dispensed(world, w) for w in ("A1", "A2")] == [1, 0]
        deviations = failed["error"]["extra"]["deviations"]
        assert {"what": "well_volume", "labware": "reservoir", "well": "A1"}.items() <= deviations[
            0
        ].items()


async def test_the_room_in_the_destination_is_re_checked_before_each_dispense(
    tmp_path: Any,
) -> None:
    async with served(tmp_path) as (s, _, world, _):
        world.set_well("plate_1", "A2", 340.0, {"buffer": 340.0})  # unknown to the twin
        failed = await call(s, "transfer", **THREE, dry_run=False, action_id="t-1")
        assert error_code(failed) == "WELL_OVERFLOW"
        ops = failed["error"]["extra"]["progress"]
        assert (ops["next"]["op"], ops["next"]["well"]) == ("dispense", "A2")
        assert [i["kind"] for i in world.incidents("lh1")] == []
        assert world.well("plate_1", "A2")["volume_ul"] == pytest.approx(340.0)


async def test_a_connection_lost_during_mixing_is_in_doubt_then_completed_under_its_own_id(
    tmp_path: Any,
) -> None:
    args = {**THREE, "destination_wells": ["A1"], "mix_after": 3}
    async with served(tmp_path) as (s, _, world, _):
        # The first mix cycle's dispense happens, its reply is lost.
        world.add_fault("lh1", {"kind": "disconnect", "at_op": 5, "params": {"after_effect": True}})
        lost = await call(s, "transfer", **args, dry_run=False, action_id="t-1")
        assert error_code(lost) == "CONNECTION_LOST"
        extra = lost["error"]["extra"]
        assert extra["in_doubt"] is True and extra["progress"]["next"]["status"] == "unknown"
        assert extra["progress"]["remainder"] is None  # unknown until read back
        again = await call(s, "transfer", **args, dry_run=False, action_id="t-1")
        assert error_code(again) == "ACTION_IN_DOUBT"

        back = await call(s, "read_back")
        assert back["resumable"] == {"t-1": {"done": 5, "of": 10}}
        cell = back["progress"]["t-1"]["summary"]["wells"]["plate_1:A1"]
        assert cell["mix_cycles"] == [1, 3]  # what a person is told: 1 of 3 cycles
        done = await call(s, "transfer", **args, dry_run=False, action_id="t-1")
        assert done["ok"] is True
        assert dispensed(world, "A1") == 4  # one dispense, three mix cycles: never more
        assert world.channel("lh1", 0)["tip"] is None


async def test_an_estop_during_mixing_is_reported_as_an_estop_with_what_was_done(
    tmp_path: Any,
) -> None:
    args = {**THREE, "destination_wells": ["A1"], "mix_after": 3}
    async with served(tmp_path, instrument_patch(command_timeout_s=60)) as (s, _, world, lab):
        world.add_fault("lh1", {"kind": "delay", "at_op": 5, "params": {"seconds": 30}})
        result: dict[str, Any] = {}

        async def transfer() -> None:
            result.update(await call(s, "transfer", **args, dry_run=False, action_id="t-1"))

        with anyio.fail_after(15):
            async with anyio.create_task_group() as tg:
                tg.start_soon(transfer)
                await wait_ops(world, 5)
                assert (await call(s, "emergency_stop"))["ok"] is True
        assert error_code(result) == "ESTOP_ACTIVE"
        extra = result["error"]["extra"]
        assert extra["progress"]["done"] == 4 and extra["in_doubt"] is True
        assert extra["progress"]["next"]["status"] == "interrupted"
        assert dispensed(world, "A1") == 1  # the interrupted mix dispense never happened

        await call(s, "reset_estop", action_id="reset-1")
        await approve(lab, "reset-1")
        assert (await call(s, "reset_estop", action_id="reset-1"))["ok"] is True
        back = await call(s, "read_back")
        assert back["resumable"] == {"t-1": {"done": 4, "of": 10}}
        world.clear_faults("lh1")
        done = await call(s, "transfer", **args, dry_run=False, action_id="t-1")
        assert done["ok"] is True and dispensed(world, "A1") == 4
        events = (await call(s, "run_events", run_id="lh1:direct", max=1000))["events"]
        assert "estop_reset" in {e["type"] for e in events}


async def test_cancel_run_interrupting_an_operation_reports_operation_aborted(
    tmp_path: Any,
) -> None:
    protocol = {"steps": [{"command": "transfer", "args": THREE}]}
    async with served(tmp_path, instrument_patch(command_timeout_s=60)) as (s, _, world, _):
        world.add_fault("lh1", {"kind": "delay", "at_op": 3, "params": {"seconds": 30}})
        run = await call(s, "start_run", protocol=protocol, dry_run=False)
        await wait_ops(world, 3)
        await call(s, "cancel_run", run_id=run["run_id"])
        info = await wait_for_run(s, run["run_id"])
        assert info["status"] == "cancelled"
        assert info["error"]["code"] == "OPERATION_ABORTED"
        assert info["error"]["extra"]["progress"]["done"] == 2


# --------------------------------------------------------------------------- remainders
def _prims(cmd: Transfer | Mix) -> list[Primitive]:
    from device_servers.liquid_handler.twin import LiquidHandlerTwin

    return list(LiquidHandlerTwin({}, 1).expand(cmd))


def test_the_remainder_of_a_one_tip_transfer_keeps_using_the_tip_on_the_channel() -> None:
    cmd = Transfer.model_validate({**THREE, "new_tip": "once"})
    prims = _prims(cmd)  # pick, a1, d1, a2, d2, a3, d3, drop
    rest = remainder(cmd, prims, 3)
    assert rest is not None
    assert rest["destination_wells"] == ["A2", "A3"] and rest["first_done"] == 1
    assert remainder(cmd, prims, len(prims)) is None
    assert remainder(cmd, prims, 0) == cmd.model_dump(mode="json")


def test_the_remainder_of_a_remainder_counts_what_its_first_destination_had_done() -> None:
    cmd = Transfer.model_validate({**THREE, "mix_after": 2, "first_done": 3})
    prims = _prims(cmd)  # A1: mix a, mix d, mix a, mix d, drop; then A2 ...
    rest = remainder(cmd, prims, 2)
    assert rest is not None
    assert rest["destination_wells"] == ["A1", "A2", "A3"] and rest["first_done"] == 5


def test_the_remainder_of_a_mix_names_the_cycles_left() -> None:
    cmd = Mix(labware="plate_1", well="A1", volume_ul=20, repetitions=3)
    prims = _prims(cmd)
    assert remainder(cmd, prims, 3) == {**cmd.model_dump(), "repetitions": 2, "first_done": 1}
    cells = summary(prims, 3)["wells"]["plate_1:A1"]
    assert cells["mix_cycles"] == [1, 3]
