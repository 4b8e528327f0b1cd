"""A run's checkpoints stay the same size however long it runs (agents.task.records).

The plan and the simulation report are stored once by content hash and named from the
graph state; each dispatch records its observation at the run's cursor outside the
checkpoints. Driven through the real graph on served instruments.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _task_lab import FakePlanner, TaskLab, make_plan, step, task_lab, waiting_for

from state_store.blobs import content_hash

pytestmark = pytest.mark.anyio


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[TaskLab]:
    async with task_lab(tmp_path) as served:
        yield served


def tip_plan(n: int) -> Any:
    """n steps: the same tip picked up and put back, alternately (the world ends as it began)."""
    return make_plan(
        *(
            step(f"s{i + 1}", "lh1", "pick_up_tips", rack="tips_1", spots=["A1"], channels=[0])
            if i % 2 == 0
            else step(f"s{i + 1}", "lh1", "drop_tips", channels=[0], destination="rack")
            for i in range(n)
        )
    )


async def largest_checkpoint(lab: TaskLab, thread: str) -> int:
    """Bytes of the channel values of the run's largest checkpoint, serialised as the saver
    stores them (the rest of a checkpoint is one version per channel: as many as channels,
    and of a length the saver picks at random)."""
    saver = lab.graph.checkpointer
    sizes = []
    async for snap in lab.graph.aget_state_history({"configurable": {"thread_id": thread}}):
        tup = await saver.aget_tuple(snap.config)
        sizes.append(len(saver.serde.dumps_typed(tup.checkpoint["channel_values"])[1]))
    return max(sizes)


async def test_the_largest_checkpoint_of_a_40_step_run_is_that_of_an_8_step_run(
    lab: TaskLab,
) -> None:
    sizes = {}
    for n in (8, 40):
        thread = f"run-{n:02d}"  # run ids of one length: they recur in the state
        # Steps go out a window at a time: the checkpoints hold at most a window's branches.
        ctx = lab.context(FakePlanner(tip_plan(n)), window=4)
        assert waiting_for(await lab.start(ctx, thread=thread)) == "approval"
        done = await lab.answer(ctx, {"decision": "approve"}, thread)
        assert done.values["status"] == "done" and done.values["report"]["steps_done"] == n
        sizes[n] = await largest_checkpoint(lab, thread)
    # Only the digits of the counters may differ (msgpack: 8 and 40 take one byte each).
    assert abs(sizes[40] - sizes[8]) <= 8, sizes


async def test_the_state_names_the_plan_and_simulation_by_hash_and_the_records_keep_them(
    lab: TaskLab,
) -> None:
    plan = tip_plan(2)
    ctx = lab.context(FakePlanner(plan))
    asked = await lab.start(ctx)
    assert "plan" not in asked.values and "simulation" not in asked.values
    assert asked.values["plan_ref"] == content_hash(plan.model_dump(mode="json"))
    assert lab.plan(asked) == plan
    simulation = lab.simulation(asked)
    assert simulation["ok"] is True and len(simulation["predictions"]) == 2
    # The person is shown the plan and the hashes of what they approve.
    question = asked.tasks[0].interrupts[0].value
    assert question["plan_ref"] == asked.values["plan_ref"]
    assert question["simulation_ref"] == asked.values["simulation_ref"]
    assert question["plan"] == plan.model_dump(mode="json")


async def test_each_dispatch_is_recorded_at_the_cursor_with_its_state_by_hash(
    lab: TaskLab,
) -> None:
    ctx = lab.context(FakePlanner(tip_plan(4)))
    await lab.start(ctx)
    done = await lab.answer(ctx, {"decision": "approve"})
    assert done.values["observed"] == {"lh1": 4}  # one lane per instrument
    seen = lab.observations(done)
    assert [o["step_id"] for o in seen] == ["s1", "s2", "s3", "s4"]
    assert all(o["ok"] and "state" not in o for o in seen)
    # Tips back in the rack: the state after s2 is the state after s4, stored once.
    assert seen[1]["state_ref"] == seen[3]["state_ref"] != seen[0]["state_ref"]
    last = lab.records.observation("run-1", 3, "lh1")
    assert last.state["kind"] == "liquid_handler" and last.action_id == "run-1/s4/drop_tips"


async def test_a_replay_from_an_older_checkpoint_asks_the_same_actions_and_moves_nothing(
    lab: TaskLab,
) -> None:
    ctx = lab.context(FakePlanner(tip_plan(4)), window=2)  # a checkpoint after two steps
    await lab.start(ctx)
    assert (await lab.answer(ctx, {"decision": "approve"})).values["status"] == "done"
    ops, actions = len(lab.ops()), lab.actions()
    thread = {"configurable": {"thread_id": "run-1"}}
    history = [s async for s in lab.graph.aget_state_history(thread)]
    [older] = [
        s for s in history if s.next == ("dispatch",) and s.values.get("lanes") == {"lh1": 2}
    ]
    async for _ in lab.graph.astream(None, older.config, context=ctx, durability="sync"):
        pass
    again = await lab.graph.aget_state(thread)
    assert again.values["status"] == "done" and again.values["observed"] == {"lh1": 4}
    assert len(lab.ops()) == ops and lab.actions() == actions
    seen = lab.observations(again)
    assert [o["step_id"] for o in seen] == ["s1", "s2", "s3", "s4"]
    assert [o["replayed"] for o in seen] == [False, False, True, True]
