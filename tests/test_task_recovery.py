"""Deviations and failures during a task run reach the right decision, judged from the world.

Faults are injected at the simulated instruments' lowest seam (the world's fault plan): less
liquid than believed, a tip pick-up failure, an empty grasp, a NaN reading. Transport failures
come from a session wrapper. Every outcome is checked against the simulated world (physical
operations, incidents, volumes, plate locations) and the instruments' action ledgers.
"""

from __future__ import annotations

import io
import math
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _task_lab import (
    DRAWER,
    DYE_UL,
    HOME,
    FakePlanner,
    TaskLab,
    flaky,
    question,
    task_lab,
    transfer_and_read,
    waiting_for,
)
from rich.console import Console

from labwright.cli._render import show_question

pytestmark = pytest.mark.anyio

LESS_LIQUID = {
    "kind": "less_liquid",
    "match": {"op": "aspirate", "labware": "reservoir"},
    "params": {"volume_ul": 10.0},
}


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[TaskLab]:
    async with task_lab(tmp_path) as served:
        yield served


async def approve_with_fault(lab: TaskLab, instrument: str, fault: dict[str, Any]) -> Any:
    """Plan and simulate on a healthy lab, arm the fault, approve: the snapshot after."""
    ctx = lab.context(FakePlanner(transfer_and_read()))
    waiting = await lab.start(ctx)
    assert waiting_for(waiting) == "approval"
    lab.world.add_fault(instrument, fault)
    return ctx, await lab.answer(ctx, {"decision": "approve"})


def action_ids(lab: TaskLab, snap: Any) -> list[str]:
    return [o["action_id"] for o in lab.observations(snap)]


def no_action_done_twice(lab: TaskLab) -> None:
    """Ledger action ids are unique, and no step (over all its attempts) was done twice."""
    rows = lab.actions()
    assert len({r["action_id"] for r in rows}) == len(rows)
    done = [r["action_id"].split("#")[0] for r in rows if r["status"] == "done"]
    assert len(done) == len(set(done))


# --------------------------------------------------------------------------- less liquid
async def test_less_liquid_than_believed_is_made_safe_and_goes_to_a_person_once(
    lab: TaskLab,
) -> None:
    _, snap = await approve_with_fault(lab, "lh1", LESS_LIQUID)

    asked = question(snap)
    assert asked is not None and (asked["kind"], asked["about"], asked["step"]) == (
        "escalation",
        "deviation",
        "s1",
    )
    assert asked["observation"]["error"]["code"] == "INSUFFICIENT_VOLUME"
    # What each answer would do, as the terminal shows it.
    assert set(asked["options"]) == {"retry", "skip", "replan", "abort"}
    shown = io.StringIO()
    show_question(Console(file=shown, width=80), asked)
    assert "skip: " in shown.getvalue()
    assert asked["served"] == [] and asked["not_served"] == [
        "plate_1:A1",
        "plate_1:A2",
        "plate_1:A3",
    ]
    # No rule lets the device agent try a short source again on its own: one attempt, then
    # a person (who is told nothing was served).
    assert lab.codes(snap, "s1") == ["INSUFFICIENT_VOLUME"]
    assert [r["action_id"] for r in lab.actions("lh1")] == [
        "run-1/s1/transfer",
        "run-1/s1/make-safe#1",
    ]
    assert [(d["labware"], d["well"], d["observed"]) for d in snap.values["deviations"]] == [
        ("reservoir", "A1", 10.0)
    ]
    # The world: the liquid-level check stopped the only aspiration; the unused tip was
    # dropped (made safe), and what a retry would send starts with a new pick-up.
    assert [o["op"] for o in lab.ops("lh1")] == ["pick", "drop"]
    assert [i["kind"] for i in lab.world.incidents()] == ["dry_aspiration_prevented"]
    assert lab.world.channel("lh1", 0)["tip"] is None
    assert asked["observation"]["resume"]["args"]["first_done"] == 0
    assert lab.volume("reservoir", "A1") == 10.0 and lab.volume("plate_1", "A1") == 0.0
    assert lab.ops("arm1") == [] and lab.world.location_of("plate_1") == HOME
    no_action_done_twice(lab)


async def test_a_person_skipping_the_short_step_lets_the_rest_of_the_run_go_on(
    lab: TaskLab,
) -> None:
    ctx, _ = await approve_with_fault(lab, "lh1", LESS_LIQUID)
    done = await lab.answer(ctx, {"decision": "skip"})
    assert done.values["status"] == "done"
    report = done.values["report"]
    assert (report["steps_total"], report["steps_done"]) == (5, 4)
    assert len(report["readings"]) == 1
    assert lab.ops("lh1", "dispense") == [] and lab.world.location_of("plate_1") == DRAWER
    no_action_done_twice(lab)


async def test_a_person_aborting_ends_the_run_and_nothing_else_moves(lab: TaskLab) -> None:
    ctx, _ = await approve_with_fault(lab, "lh1", LESS_LIQUID)
    done = await lab.answer(ctx, {"decision": "abort"})
    assert done.next == () and done.values["status"] == "aborted"
    assert done.values["report"]["readings"] == []
    assert [o["op"] for o in lab.ops()] == ["pick", "drop"]
    assert lab.world.location_of("plate_1") == HOME


async def test_a_person_retrying_after_refilling_the_source_completes_each_well_once(
    lab: TaskLab,
) -> None:
    ctx, _ = await approve_with_fault(lab, "lh1", LESS_LIQUID)
    lab.world.set_well("reservoir", "A1", DYE_UL)  # a person refilled it as planned
    done = await lab.answer(ctx, {"decision": "retry", "by": "operator"})
    assert done.values["status"] == "done"
    assert [lab.volume("plate_1", w) for w in ("A1", "A2", "A3")] == [50.0, 50.0, 50.0]
    assert lab.volume("reservoir", "A1") == DYE_UL - 150.0
    assert len(lab.ops("lh1", "aspirate")) == len(lab.ops("lh1", "dispense")) == 3
    assert len(done.values["report"]["readings"]) == 1
    no_action_done_twice(lab)


async def test_a_step_that_went_through_but_left_other_volumes_than_planned_goes_to_a_person(
    lab: TaskLab,
) -> None:
    ctx = lab.context(FakePlanner(transfer_and_read()))
    await lab.start(ctx)
    lab.world.set_well("reservoir", "A1", 1000.0)  # enough, but not what the plan believes
    snap = await lab.answer(ctx, {"decision": "approve"})
    asked = question(snap)
    assert asked is not None and (asked["kind"], asked["about"], asked["step"]) == (
        "escalation",
        "deviation",
        "s1",
    )
    assert lab.codes(snap, "s1") == [None]
    wrong = {(d["what"], d["expected"], d["observed"]) for d in snap.values["deviations"]}
    assert ("volume reservoir:A1 (uL)", DYE_UL - 150.0, 850.0) in wrong
    assert lab.ops("arm1") == [] and lab.world.location_of("plate_1") == HOME


# --------------------------------------------------------------------------- tips and grips
async def test_a_failed_tip_pick_up_is_retried_from_the_rack_and_the_run_completes(
    lab: TaskLab,
) -> None:
    fault = {"kind": "tip_pickup_fail", "match": {"op": "pick"}, "times": 1}
    _, done = await approve_with_fault(lab, "lh1", fault)
    assert done.values["status"] == "done"
    # The device agent's own rule: the rest (here: all of it) sent again, the next tip taken.
    assert lab.codes(done, "s1") == [None] and lab.observations(done, "s1")[0]["attempt"] == 2
    ledger = [(r["action_id"], r["status"]) for r in lab.actions("lh1")]
    assert ledger == [("run-1/s1/transfer", "failed"), ("run-1/s1/transfer#2", "done")]
    assert lab.world.tips("tips_1")["A1"] is True  # the spot that failed was not taken again
    # One tip really left the rack, and the liquid moved once.
    assert len(lab.ops("lh1", "pick")) == 1
    assert sum(1 for present in lab.world.tips("tips_1").values() if not present) == 1
    assert [lab.volume("plate_1", w) for w in ("A1", "A2", "A3")] == [50.0, 50.0, 50.0]
    assert len(lab.ops("lh1", "dispense")) == 3
    no_action_done_twice(lab)


async def test_a_failed_grip_is_retried_and_the_plate_ends_where_the_plan_expects(
    lab: TaskLab,
) -> None:
    fault = {"kind": "empty_grasp", "match": {"op": "pick"}, "times": 1}
    _, done = await approve_with_fault(lab, "arm1", fault)
    assert done.values["status"] == "done"
    assert lab.codes(done) == [None] * 5  # recovered by the arm's device agent, within its rules
    assert [r["action_id"] for r in lab.actions("arm1")][:2] == [
        "run-1/s3/move_plate",
        "run-1/s3/move_plate#2",
    ]
    assert lab.world.location_of("plate_1") == DRAWER
    assert [(o["op"], o["well"]) for o in lab.ops("arm1")] == [
        ("pick_plate", HOME),
        ("place_plate", DRAWER),
    ]
    assert lab.world.incidents() == []
    assert len(done.values["report"]["readings"]) == 1
    no_action_done_twice(lab)


# --------------------------------------------------------------------------- readings
async def test_a_nan_reading_goes_to_a_person_and_is_never_reported_as_data(
    lab: TaskLab,
) -> None:
    fault = {"kind": "nan_reading", "match": {"op": "read_absorbance"}, "times": 1}
    ctx, snap = await approve_with_fault(lab, "reader1", fault)
    asked = question(snap)
    assert asked is not None and (asked["kind"], asked["step"]) == ("escalation", "s5")
    assert asked["observation"]["error"]["code"] == "SENSOR_INVALID"
    assert asked["observation"]["measurements"] == []
    done = await lab.answer(ctx, {"decision": "abort"})
    assert done.values["status"] == "aborted"
    assert done.values["report"]["readings"] == []


async def test_a_person_retrying_a_nan_reading_gets_a_real_reading(lab: TaskLab) -> None:
    fault = {"kind": "nan_reading", "match": {"op": "read_absorbance"}, "times": 1}
    ctx, _ = await approve_with_fault(lab, "reader1", fault)
    done = await lab.answer(ctx, {"decision": "retry"})
    assert done.values["status"] == "done"
    [reading] = done.values["report"]["readings"]
    assert not any(math.isnan(v) for v in reading["values"].values())
    assert action_ids(lab, done)[-2:] == ["run-1/s5/read_absorbance", "run-1/s5/read_absorbance#2"]


# --------------------------------------------------------------------------- transport
@pytest.mark.parametrize("after", [True, False], ids=["answer-lost", "request-lost"])
async def test_a_transport_failure_is_retried_with_the_same_action_id_and_executes_once(
    tmp_path: Path, after: bool
) -> None:
    async with task_lab(tmp_path, flaky("lh1", "transfer", after=after)) as lab:
        ctx = lab.context(FakePlanner(transfer_and_read()))
        done = await lab.approved(ctx)
        assert done.values["status"] == "done"
        first, second = lab.observations(done, "s1")
        assert first["transport_error"] is not None and second["ok"] is True
        assert first["action_id"] == second["action_id"] == "run-1/s1/transfer"
        assert second["replayed"] is after
        assert [r["action_id"] for r in lab.actions("lh1")] == ["run-1/s1/transfer"]
        assert len(lab.ops("lh1", "pick")) == 1 and len(lab.ops("lh1", "dispense")) == 3
        assert [lab.volume("plate_1", w) for w in ("A1", "A2", "A3")] == [50.0] * 3


async def test_an_instrument_unreachable_twice_goes_to_a_person_without_acting(
    tmp_path: Path,
) -> None:
    async with task_lab(tmp_path, flaky("arm1", "move_plate", after=False, times=99)) as lab:
        ctx = lab.context(FakePlanner(transfer_and_read()))
        snap = await lab.approved(ctx)
        asked = question(snap)
        assert asked is not None and (asked["kind"], asked["step"]) == ("escalation", "s3")
        assert asked["observation"]["transport_error"]
        assert action_ids(lab, snap)[2:] == ["run-1/s3/move_plate"] * 2
        assert lab.ops("arm1") == [] and lab.world.location_of("plate_1") == HOME
        assert lab.actions("arm1") == []
