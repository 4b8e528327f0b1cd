"""A plan's approval is bound to what the person was shown: the plan, the simulation, the
policy rules in force and the instruments' twins. An approval that is not validly signed, or
whose basis no longer holds when execution starts, is void: nothing moves and the run asks
again. Judged from the simulated world and the instruments' ledgers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _task_lab import FakePlanner, TaskLab, question, task_lab, transfer_and_read, waiting_for
from langgraph.types import Command

from agents.task.approval import decision_of
from policies import build_engine
from state_store import local_operator

pytestmark = pytest.mark.anyio


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[TaskLab]:
    async with task_lab(tmp_path) as served:
        yield served


def signed(lab: TaskLab, basis: dict[str, Any], run_id: str = "run-1") -> dict[str, Any]:
    me = local_operator()
    assert lab.signer is not None
    return lab.signer.sign(run_id=run_id, person=me.name, role=me.role, via=me.via, basis=basis)


async def test_the_approval_question_carries_its_basis_and_the_agent_inbox_shape(
    lab: TaskLab,
) -> None:
    asked = question(await lab.start(lab.context(FakePlanner(transfer_and_read()))))
    assert asked is not None
    assert set(asked["basis"]) == {"plan", "simulation", "policy", "twins"}
    assert asked["action_request"]["action"] == "approve_plan"
    assert asked["action_request"]["args"]["basis"] == asked["basis"]
    assert asked["config"]["allow_accept"] and asked["config"]["allow_ignore"]
    assert "transfer" in asked["description"]


async def test_an_unsigned_approval_is_void_and_nothing_moves(lab: TaskLab) -> None:
    ctx = lab.context(FakePlanner(transfer_and_read()))
    await lab.start(ctx)
    again = await lab.drive(ctx, Command(resume={"decision": "approve", "by": "a model"}))
    asked = question(again)
    assert asked is not None and asked["kind"] == "approval"
    assert asked["voided"]["changed"] == ["signature"]
    assert lab.world.physical_ops() == [] and lab.actions() == []


async def test_an_altered_record_is_void(lab: TaskLab) -> None:
    ctx = lab.context(FakePlanner(transfer_and_read()))
    asked = question(await lab.start(ctx))
    assert asked is not None
    record = signed(lab, asked["basis"])
    record["by"] = "someone else"
    again = await lab.drive(ctx, Command(resume={"decision": "approve", "record": record}))
    assert question(again)["voided"]["changed"] == ["signature"]  # type: ignore[index]
    assert lab.actions() == []


async def test_a_record_for_another_run_is_void(lab: TaskLab) -> None:
    ctx = lab.context(FakePlanner(transfer_and_read()))
    asked = question(await lab.start(ctx))
    assert asked is not None
    record = signed(lab, asked["basis"], run_id="run-2")
    again = await lab.drive(ctx, Command(resume={"decision": "approve", "record": record}))
    assert waiting_for(again) == "approval" and lab.actions() == []


async def test_an_approval_of_another_plan_is_void(lab: TaskLab) -> None:
    ctx = lab.context(FakePlanner(transfer_and_read()))
    asked = question(await lab.start(ctx))
    assert asked is not None
    record = signed(lab, {**asked["basis"], "plan": "0" * 64})
    again = await lab.drive(ctx, Command(resume={"decision": "approve", "record": record}))
    assert question(again)["voided"]["changed"] == ["plan"]  # type: ignore[index]
    assert lab.actions() == []


async def test_a_twin_that_changed_after_the_plan_was_shown_voids_the_approval(
    lab: TaskLab,
) -> None:
    ctx = lab.context(FakePlanner(transfer_and_read()))
    shown = question(await lab.start(ctx))
    assert shown is not None
    moved = await lab.agents["lh1"].call(
        "transfer",
        source="plate_1",
        source_well="B1",
        destination="plate_1",
        destination_wells=["H12"],
        volume_ul=20.0,
        dry_run=False,
        action_id="someone-else/1",
    )
    assert moved["ok"], moved
    again = await lab.drive(
        ctx, Command(resume={"decision": "approve", "record": signed(lab, shown["basis"])})
    )
    asked = question(again)
    assert asked is not None and asked["kind"] == "approval"
    assert asked["voided"]["changed"] == ["twins"]
    assert asked["basis"]["twins"] != shown["basis"]["twins"]
    assert [a["action_id"] for a in lab.actions()] == ["someone-else/1"]
    # Approved again on what is there now, the run goes ahead.
    done = await lab.answer(ctx, {"decision": "approve"})
    assert done.values["status"] == "done"


async def test_policy_rules_that_changed_after_the_plan_was_shown_void_the_approval(
    lab: TaskLab,
) -> None:
    ctx = lab.context(FakePlanner(transfer_and_read()))
    shown = question(await lab.start(ctx))
    assert shown is not None
    ctx.policies = {
        "lh1": build_engine(
            "liquid_handler",
            extra_rules=[{"id": "small", "type": "limit", "arg": "volume_ul", "max": 500}],
        )
    }
    again = await lab.drive(
        ctx, Command(resume={"decision": "approve", "record": signed(lab, shown["basis"])})
    )
    assert question(again)["voided"]["changed"] == ["policy"]  # type: ignore[index]
    assert lab.actions() == []


async def test_a_valid_approval_is_confirmed_and_audited_with_the_person(
    lab: TaskLab,
) -> None:
    ctx = lab.context(FakePlanner(transfer_and_read()))
    await lab.start(ctx)
    done = await lab.answer(ctx, {"decision": "approve"})
    assert done.values["status"] == "done"
    record = done.values["approval"]["record"]
    assert record["by"] == local_operator().name and record["via"] == "terminal"
    assert lab.signer is not None and lab.signer.valid(record, "run-1")


def test_agent_inbox_responses_read_as_decisions() -> None:
    basis = {"plan": "p", "simulation": "s", "policy": "r", "twins": "t"}
    accept = [{"type": "accept", "args": {"action": "approve_plan", "args": {"basis": basis}}}]
    assert decision_of(accept) == {"inbox": "accept", "decision": "approve", "basis": basis}
    assert decision_of([{"type": "ignore", "args": None}])["decision"] == "reject"
    edit = decision_of({"type": "response", "args": "use plate_2"})
    assert (edit["decision"], edit["text"]) == ("edit", "use plate_2")
    edited = decision_of(
        {"type": "edit", "args": {"action": "approve_plan", "args": {"request": "add 5 uL"}}}
    )
    assert (edited["decision"], edited["text"]) == ("edit", "add 5 uL")
    assert decision_of("yes")["decision"] is None
    assert decision_of({"decision": "approve"}) == {"decision": "approve"}
