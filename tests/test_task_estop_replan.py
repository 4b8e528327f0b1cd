"""The task agent after its device agents' own recovery: an e-stop stops the run (the step is
not counted done, nothing reaches into the stopped instrument), a person is told what was
served, and the rest of a run can be replanned from the observed state and approved."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from _task_lab import (
    DRAWER,
    HOME,
    FakePlanner,
    TaskLab,
    make_plan,
    question,
    read_steps,
    task_lab,
    transfer,
    waiting_for,
)

from agents.task.planning.models import LabView, Plan, PlanStep, Refusal
from agents.task.planning.replan import replan_rest

pytestmark = pytest.mark.anyio


def always(step: PlanStep) -> PlanStep:
    """A new tip per destination."""
    return step.model_copy(update={"args": {**step.args, "new_tip": "always"}})


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[TaskLab]:
    async with task_lab(tmp_path) as served:
        yield served


async def test_an_estop_stops_the_run_and_no_arm_reaches_into_the_stopped_instrument(
    lab: TaskLab,
) -> None:
    plan = make_plan(always(transfer("s1", ["A1", "A2"])), *read_steps(2))
    ctx = lab.context(FakePlanner(plan))
    assert waiting_for(await lab.start(ctx)) == "approval"
    lab.world.add_fault("lh1", {"kind": "delay", "at_op": 6, "params": {"seconds": 20}})
    snap = None

    async def run() -> None:
        nonlocal snap
        snap = await lab.answer(ctx, {"decision": "approve"})

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(20):
            while len(lab.ops("lh1")) < 5:  # A1 served, A2's tip picked up
                await anyio.sleep(0.01)
        await lab.agents["lh1"].call("emergency_stop")
    asked = question(snap)
    assert asked is not None and asked["about"] == "estop"
    assert asked["observation"]["error"]["code"] == "ESTOP_ACTIVE"
    assert asked["served"] == ["plate_1:A1"] and asked["not_served"] == ["plate_1:A2"]
    assert "CONNECTION_LOST" not in asked["question"]

    # Skipping the stopped step: the arm must not take plate_1 off the stopped deck.
    skipped = await lab.answer(ctx, {"decision": "skip"})
    asked = question(skipped)
    assert asked is not None and asked["step"] == "s3" and asked["about"] == "estop"
    assert lab.ops("arm1") == [] and lab.world.location_of("plate_1") == HOME
    aborted = await lab.answer(ctx, {"decision": "abort"})
    assert aborted.values["report"]["steps_done"] == 1  # the drawer only; s1 never counts
    assert lab.world.location_of("plate_1") != DRAWER


class RestPlanner(FakePlanner):
    """The embedded planner's replanning of the rest, behind a fixed first plan."""

    def replan(self, request: str, lab: LabView, previous: Plan, errors: list[str]):
        return replan_rest(request, lab, previous, errors)


async def test_the_rest_is_replanned_from_the_observed_state_and_approved_with_the_difference(
    lab: TaskLab,
) -> None:
    lab.world.set_well("reservoir", "A2", 5000.0, {"dye": 5000.0})  # a second dye well
    plan = make_plan(always(transfer("s1", ["A1", "A2", "A3"])))
    ctx = lab.context(RestPlanner(plan))
    assert waiting_for(await lab.start(ctx)) == "approval"
    lab.world.add_fault(
        "lh1",
        {
            "kind": "less_liquid",
            "match": {"op": "aspirate", "well": "A1", "labware": "reservoir"},
            "params": {"volume_ul": 60.0},
        },
    )
    snap = await lab.answer(ctx, {"decision": "approve"})
    asked = question(snap)
    assert asked is not None and asked["observation"]["error"]["code"] == "INSUFFICIENT_VOLUME"
    assert asked["served"] == ["plate_1:A1"]

    proposal = question(await lab.answer(ctx, {"decision": "replan"}))
    assert proposal is not None and proposal["kind"] == "approval" and proposal["replan"]
    steps = proposal["plan"]["steps"]
    assert [s["id"] for s in steps] == ["s1", "s1-r1"]
    assert steps[0]["args"]["destination_wells"] == ["A1"]  # what s1 really did
    assert steps[1]["args"]["destination_wells"] == ["A2", "A3"]
    [change] = proposal["difference"]
    assert change["changed"]["source_well"] == {"was": "A1", "now": "A2"}

    done = await lab.answer(ctx, {"decision": "approve"})
    assert done.values["status"] == "done"
    assert [lab.volume("plate_1", w) for w in ("A1", "A2", "A3")] == [50.0] * 3
    assert lab.volume("reservoir", "A2") == 4900.0
    assert lab.world.incidents() == []


def test_replanning_refuses_when_no_well_holds_enough_of_the_liquid() -> None:
    lab = LabView.model_validate(
        {
            "instruments": {},
            "labware": {
                "reservoir": {
                    "id": "reservoir",
                    "kind": "plate",
                    "instrument": "lh1",
                    "location": "x",
                    "home": "x",
                    "rows": 1,
                    "cols": 12,
                    "wells": {"A1": {"volume_ul": 10, "contents": {"dye": 10}}},
                }
            },
        }
    )
    rest = replan_rest("r", lab, make_plan(transfer("s1", ["A2", "A3"])), [])
    assert isinstance(rest, Refusal) and rest.reason.startswith("insufficient_liquid")
