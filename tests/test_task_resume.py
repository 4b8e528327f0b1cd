"""A task run survives its process: stopped mid-run, resumed by a new process, done once.

Each "process" here is a fresh set of device-server runtimes on the same lab files, new MCP
sessions and device agents, and a new graph on the same SQLite checkpoint file. The resumed
run must finish with every plan step executed exactly once in the simulated world and in the
instruments' action ledgers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _task_lab import (
    DRAWER,
    HOME,
    Crash,
    FakePlanner,
    TaskLab,
    flaky,
    process,
    question,
    task_lab_file,
    transfer_and_read,
    waiting_for,
)

from agents.task.planning.models import LabView, Plan
from device_servers.lab import load

pytestmark = pytest.mark.anyio


class NoReplanning:
    """A resumed run must not plan again: its plan is in the checkpoints."""

    def plan(self, request: str, lab: LabView) -> Plan:
        raise AssertionError("a resumed run asked the planner again")


def crash_at_dispatch_of(step_id: str) -> Callable[[str, dict[str, Any]], None]:
    def progress(what: str, data: dict[str, Any]) -> None:
        if what == "dispatch" and data["step"] == step_id:
            raise Crash(f"the task process died before dispatching {step_id}")

    return progress


def every_step_done_once(lab: TaskLab, snap: Any) -> None:
    """Checkpoint, ledger and world agree: each of the five steps happened exactly once."""
    plan = lab.plan(snap)
    assert snap.values["status"] == "done"
    rows = lab.actions()
    assert sorted(r["action_id"] for r in rows) == sorted(
        f"run-1/{s.id}/{s.command}" for s in plan.steps
    )
    assert {r["status"] for r in rows} == {"done"}
    counts = {op: len(lab.ops("lh1", op)) for op in ("pick", "aspirate", "dispense", "drop")}
    assert counts == {"pick": 1, "aspirate": 3, "dispense": 3, "drop": 1}
    assert [(o["op"], o["well"]) for o in lab.ops("arm1")] == [
        ("pick_plate", HOME),
        ("place_plate", DRAWER),
    ]
    assert [lab.volume("plate_1", w) for w in ("A1", "A2", "A3")] == [50.0, 50.0, 50.0]
    assert lab.world.location_of("plate_1") == DRAWER
    assert len(snap.values["report"]["readings"]) == 1
    assert lab.world.incidents() == []


async def test_a_run_stopped_between_steps_resumes_in_a_new_process_and_does_each_step_once(
    tmp_path: Path,
) -> None:
    config = load(task_lab_file(tmp_path))
    checkpoints = tmp_path / "checkpoints.sqlite"
    async with process(config, checkpoints) as first:
        ctx = first.context(FakePlanner(transfer_and_read()), crash_at_dispatch_of("s3"))
        assert waiting_for(await first.start(ctx)) == "approval"
        with pytest.raises(Crash):
            await first.answer(ctx, {"decision": "approve"})
        assert len(first.ops("lh1", "dispense")) == 3 and first.ops("arm1") == []

    async with process(config, checkpoints) as second:
        ctx = second.context(NoReplanning())
        done = await second.drive(ctx, None)
        assert [d["step"] for what, d in second.events if what == "dispatch"] == ["s3", "s4", "s5"]
        every_step_done_once(second, done)


async def test_a_step_the_instrument_did_before_the_crash_is_not_done_again_on_resume(
    tmp_path: Path,
) -> None:
    config = load(task_lab_file(tmp_path))
    checkpoints = tmp_path / "checkpoints.sqlite"
    dies_after_the_move = flaky("arm1", "move_plate", after=True, error=Crash)
    async with process(config, checkpoints, dies_after_the_move) as first:
        ctx = first.context(FakePlanner(transfer_and_read()))
        await first.start(ctx)
        with pytest.raises(Crash):
            await first.answer(ctx, {"decision": "approve"})
        assert first.world.location_of("plate_1") == DRAWER  # the arm did move it

    async with process(config, checkpoints) as second:
        done = await second.drive(second.context(NoReplanning()), None)
        moved = [o for o in second.observations(done) if o["step_id"] == "s3"]
        assert [(o["ok"], o["replayed"]) for o in moved] == [(True, True)]
        every_step_done_once(second, done)


async def test_a_run_waiting_for_approval_is_approved_from_a_new_process(
    tmp_path: Path,
) -> None:
    config = load(task_lab_file(tmp_path))
    checkpoints = tmp_path / "checkpoints.sqlite"
    async with process(config, checkpoints) as first:
        await first.start(first.context(FakePlanner(transfer_and_read())))

    async with process(config, checkpoints) as second:
        snap = await second.graph.aget_state({"configurable": {"thread_id": "run-1"}})
        asked = question(snap)
        assert asked is not None and asked["kind"] == "approval"
        assert second.world.physical_ops() == []
        done = await second.answer(second.context(NoReplanning()), {"decision": "approve"})
        every_step_done_once(second, done)
