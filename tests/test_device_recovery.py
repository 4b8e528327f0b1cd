"""A device agent's own recovery within its policy's ``recovery:`` rules, over a real MCP
session to a real liquid-handler server, judged from the simulated world and the audit log.

It sends only what is left of a step (never the whole step again), completes an in-doubt
action only through its own id after a read back, drops a used tip before a pick-up, and
asks a person (with how a retry would continue) wherever its rules do not let it act alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from test_estop_and_faults import instrument_patch, served

from agents.device.agent import DeviceAgent
from agents.task.planning.models import PlanStep
from device_servers.lab import load
from device_servers.sim.world import SimWorld
from policies import PolicyError, build_engine, load_rules_file
from state_store import AuditLog, connect

pytestmark = pytest.mark.anyio
RUN = "run-1"
THREE = {
    "source": "reservoir",
    "source_well": "A1",
    "destination": "plate_1",
    "destination_wells": ["A1", "A2", "A3"],
    "volume_ul": 50,
    "new_tip": "always",
}


class Bench:
    """A device agent with the liquid handler's default rules, on a served instrument."""

    def __init__(self, agent: DeviceAgent, world: SimWorld, audit: AuditLog) -> None:
        self.agent, self.world, self.audit = agent, world, audit

    def dispensed(self, well: str) -> int:
        return sum(
            1
            for op in self.world.physical_ops("lh1")
            if op["op"] == "dispense" and (op["labware"], op["well"]) == ("plate_1", well)
        )

    def notes(self) -> list[str]:
        return [e.decision_note or "" for e in self.audit.entries(RUN) if e.tool == "recover"]


@pytest.fixture
async def bench(tmp_path: Path) -> AsyncIterator[Bench]:
    async with served(tmp_path, instrument_patch(command_timeout_s=1)) as (s, _, world, lab):
        audit = AuditLog(connect(load(lab).db_path))
        agent = DeviceAgent("lh1", "liquid_handler", s, build_engine("liquid_handler"), audit=audit)
        yield Bench(agent, world, audit)


def step(**args: Any) -> PlanStep:
    return PlanStep(id="s1", instrument="lh1", command="transfer", args={**THREE, **args})


async def test_a_failed_pick_up_at_the_second_well_sends_only_the_rest_with_the_next_tip(
    bench: Bench,
) -> None:
    bench.world.add_fault("lh1", {"kind": "tip_pickup_fail", "at_op": 5, "match": {"op": "pick"}})
    obs = await bench.agent.execute(step(), RUN)
    assert obs.ok and obs.attempt == 2 and obs.action_id == f"{RUN}/s1/transfer#2"
    assert obs.args["destination_wells"] == ["A2", "A3"]
    assert [bench.dispensed(w) for w in ("A1", "A2", "A3")] == [1, 1, 1]
    assert obs.served == ["plate_1:A1", "plate_1:A2", "plate_1:A3"]
    picks = [op["well"] for op in bench.world.physical_ops("lh1") if op["op"] == "pick"]
    assert len(picks) == len(set(picks)) == 3  # the failed spot was not taken again
    assert any("tip pick-up failed" in n and "transfer#2" in n for n in bench.notes())


async def test_a_second_failure_past_the_rules_limit_goes_to_a_person_with_the_rest(
    bench: Bench,
) -> None:
    bench.world.add_fault(
        "lh1", {"kind": "tip_pickup_fail", "at_op": 5, "match": {"op": "pick"}, "times": 1}
    )
    bench.world.add_fault("lh1", {"kind": "tip_pickup_fail", "at_op": 10, "match": {"op": "pick"}})
    obs = await bench.agent.execute(step(destination_wells=["A1", "A2", "A3", "A4"]), RUN)
    assert not obs.ok and obs.code == "NO_TIP" and obs.attempt == 2
    assert obs.served == ["plate_1:A1", "plate_1:A2"]
    assert obs.not_served == ["plate_1:A3", "plate_1:A4"]
    assert obs.resume == {
        "mode": "remainder",
        "args": {**obs.args, "destination_wells": ["A3", "A4"], "first_done": 0},
        "served": ["plate_1:A1", "plate_1:A2"],
    }
    # A person's retry means the same: the rest only, after a read back.
    again = await bench.agent.execute(step(), RUN, attempt=3, resume=obs.resume)
    assert again.ok and again.action_id == f"{RUN}/s1/transfer#3"
    assert [bench.dispensed(w) for w in ("A1", "A2", "A3", "A4")] == [1, 1, 1, 1]


async def test_a_lost_reply_during_mixing_is_read_back_and_left_to_a_person(bench: Bench) -> None:
    bench.world.add_fault(
        "lh1", {"kind": "disconnect", "at_op": 5, "params": {"after_effect": True}}
    )
    s1 = step(destination_wells=["A1"], mix_after=3)
    obs = await bench.agent.execute(s1, RUN)
    assert not obs.ok and obs.code == "CONNECTION_LOST" and obs.in_doubt
    assert obs.operations is not None and obs.operations["resolved"] is True
    cycles = obs.operations["summary"]["wells"]["plate_1:A1"]["mix_cycles"]
    assert cycles == [1, 3]  # what the read back shows: 1 of 3 cycles, a tip on the channel
    assert obs.resume is not None and obs.resume["mode"] == "complete"
    assert obs.resume["action_id"] == f"{RUN}/s1/transfer"  # its own id, never a new one
    assert any("a person decides" in n for n in bench.notes())

    done = await bench.agent.execute(s1, RUN, attempt=2, resume=obs.resume)
    assert done.ok and done.action_id == f"{RUN}/s1/transfer"
    assert bench.dispensed("A1") == 4 and bench.world.channel("lh1", 0)["tip"] is None


async def test_a_lost_reply_with_only_the_tip_drop_left_is_completed_alone(bench: Bench) -> None:
    bench.world.add_fault(
        "lh1", {"kind": "disconnect", "at_op": 3, "params": {"after_effect": True}}
    )
    obs = await bench.agent.execute(step(destination_wells=["A1"]), RUN)
    assert obs.ok and obs.action_id == f"{RUN}/s1/transfer"
    assert bench.dispensed("A1") == 1 and bench.world.channel("lh1", 0)["tip"] is None
    assert any("completing the rest under its own id" in n for n in bench.notes())


async def test_a_hang_is_read_back_before_anything_is_sent_again(bench: Bench) -> None:
    bench.world.add_fault("lh1", {"kind": "hang", "at_op": 6, "match": {"op": "aspirate"}})
    obs = await bench.agent.execute(step(), RUN)
    assert not obs.ok and obs.code == "HARDWARE_TIMEOUT" and obs.in_doubt
    reads = [e for e in bench.audit.entries(RUN) if e.tool == "read_back"]
    assert reads and "HARDWARE_TIMEOUT" in (reads[-1].decision_note or "")
    assert obs.served == ["plate_1:A1"] and obs.resume is not None
    done = await bench.agent.execute(step(), RUN, attempt=2, resume=obs.resume)
    assert done.ok and [bench.dispensed(w) for w in ("A1", "A2", "A3")] == [1, 1, 1]


async def test_a_used_tip_left_on_the_channel_is_dropped_before_the_next_pick_up(
    bench: Bench,
) -> None:
    left = await bench.agent.call("pick_up_tips", rack="tips_1", dry_run=False, action_id="x/y/z")
    assert left["ok"]
    obs = await bench.agent.execute(step(destination_wells=["A1"]), RUN)
    assert obs.ok and bench.dispensed("A1") == 1
    assert any("used tip" in n for n in bench.notes()) or any(
        "used tip" in (e.decision_note or "") for e in bench.audit.entries(RUN)
    )
    assert bench.world.channel("lh1", 0)["tip"] is None


async def test_rules_that_allow_nothing_leave_every_failure_to_a_person(tmp_path: Path) -> None:
    rules = tmp_path / "strict.yaml"
    rules.write_text("kind: liquid_handler\nrules: []\nrecovery: {again: []}\n")
    async with served(tmp_path) as (s, _, world, _):
        agent = DeviceAgent("lh1", "liquid_handler", s, build_engine("liquid_handler", rules))
        world.add_fault("lh1", {"kind": "tip_pickup_fail", "at_op": 5, "match": {"op": "pick"}})
        obs = await agent.execute(step(), RUN)
        assert not obs.ok and obs.code == "NO_TIP" and obs.attempt == 1
        assert obs.resume is not None and obs.resume["mode"] == "remainder"


def test_a_recovery_section_with_an_unknown_field_names_it(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: liquid_handler\nrecovery: {again: [{codes: [NO_TIP], tries: 3}]}\n")
    with pytest.raises(PolicyError, match=r"bad\.yaml: recovery\.again\.0\.tries"):
        load_rules_file(bad)


def test_the_default_rules_of_every_kind_say_what_their_agent_may_do_alone() -> None:
    lh = build_engine("liquid_handler").recovery
    assert lh.again_for("NO_TIP", "pick") is not None and lh.again_for("NO_TIP", "drop") is None
    assert lh.may_complete("CONNECTION_LOST", ["drop"])
    assert not lh.may_complete("CONNECTION_LOST", ["dispense", "drop"])
    assert not lh.may_complete("HARDWARE_TIMEOUT", ["drop"])
    assert lh.may_complete("restart", ["aspirate", "dispense"])
    arm = build_engine("plate_mover").recovery
    assert arm.again_for("GRIP_FAILED", "pick") is not None
    assert not arm.may_complete("ESTOP_ACTIVE", ["place"])
