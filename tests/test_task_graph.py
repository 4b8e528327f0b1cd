"""The task graph on a real simulated lab: plan -> simulate -> approve -> dispatch/check -> report.

Four real device servers (lh1, reader1, hs1, arm1) over in-memory MCP sessions, each wrapped by
its DeviceAgent; the graph checkpointed in memory and driven like the runner drives it. A fake
planner gives fixed plans (the graph must not care who planned); the rule planner and the LLM
planner (scripted fake chat model) each run one request end to end. Outcomes are judged from
the simulated world and the instruments' action ledgers, never from what the agent says.
"""

from __future__ import annotations

import ast
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from _task_lab import (
    DRAWER,
    DYE_UL,
    HOME,
    FakePlanner,
    ReplanningPlanner,
    TaskLab,
    make_plan,
    question,
    read_steps,
    step,
    task_lab,
    transfer,
    transfer_and_read,
    waiting_for,
)
from conftest import ROOT
from test_llm_planner import ScriptedModel

from agents.task.planning._coverage import clauses_of
from agents.task.planning.llm import LLMPlanner
from agents.task.planning.models import Clarification, Plan, Refusal
from agents.task.planning.rules import RulePlanner

pytestmark = pytest.mark.anyio


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[TaskLab]:
    async with task_lab(tmp_path) as served:
        yield served


def world_matches_expectations(lab: TaskLab, plan: Plan) -> None:
    """Every well volume and plate location the plan expects is what the world holds."""
    final: dict[str, Any] = {}
    places: dict[str, str] = {}
    for s in plan.steps:
        final.update(s.expect.get("wells") or {})
        places.update(s.expect.get("plate_location") or {})
    assert final and places
    for key, volume in final.items():
        labware, _, well = key.partition(":")
        assert lab.volume(labware, well) == pytest.approx(float(volume), abs=0.01), key
    for plate, where in places.items():
        assert lab.world.location_of(plate) == where


def each_step_executed_once(lab: TaskLab, plan: Plan, run_id: str = "run-1") -> None:
    """One done ledger row per plan step, keyed by the step's deterministic action id."""
    rows = lab.actions()
    ids = [r["action_id"] for r in rows]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == sorted(f"{run_id}/{s.id}/{s.command}" for s in plan.steps)
    assert {r["status"] for r in rows} == {"done"}


# --------------------------------------------------------------------------- happy path
async def test_an_approved_plan_is_simulated_dispatched_and_reported_with_readings(
    lab: TaskLab,
) -> None:
    plan = transfer_and_read()
    ctx = lab.context(FakePlanner(plan))

    waiting = await lab.start(ctx)
    asked = question(waiting)
    assert asked is not None and asked["kind"] == "approval"
    assert Plan.model_validate(asked["plan"]) == plan
    summary = asked["simulation"]
    assert summary["ok"] is True
    assert (summary["steps"], summary["transfers"], summary["tips_used"]) == (5, 3, 1)
    assert summary["plate_moves"] == 1
    assert summary["dispensed_ul"] == {"dye": 150.0}
    assert summary["duration_s"] > 0
    assert summary["per_instrument"] == {"lh1": 1, "reader1": 3, "arm1": 1}
    assert "predictions" not in summary
    assert lab.world.physical_ops() == [] and lab.actions() == []

    done = await lab.answer(ctx, {"decision": "approve"})
    assert done.next == () and done.values["status"] == "done"
    report = done.values["report"]
    assert (report["steps_total"], report["steps_done"]) == (5, 5)
    assert report["deviations"] == []
    [reading] = report["readings"]
    assert (reading["plate"], reading["mode"], len(reading["values"])) == (
        "plate_1",
        "absorbance",
        96,
    )
    dyed = [reading["values"][w] for w in ("A1", "A2", "A3")]
    assert min(dyed) > 1.5 and reading["values"]["A4"] < 0.1
    world_matches_expectations(lab, plan)
    each_step_executed_once(lab, plan)
    assert len(lab.ops("lh1", "pick")) == 1
    assert len(lab.ops("lh1", "dispense")) == 3


async def test_the_dispatched_steps_follow_the_plan_in_order(lab: TaskLab) -> None:
    plan = transfer_and_read()
    ctx = lab.context(FakePlanner(plan))
    await lab.approved(ctx)
    dispatched = [d["step"] for what, d in lab.events if what == "dispatch"]
    assert dispatched == [s.id for s in plan.steps]
    arm = [(o["op"], o["well"]) for o in lab.ops("arm1")]
    assert arm == [("pick_plate", HOME), ("place_plate", DRAWER)]


# --------------------------------------------------------------------------- approval answers
async def test_a_rejected_plan_moves_nothing_and_ends_rejected(lab: TaskLab) -> None:
    ctx = lab.context(FakePlanner(transfer_and_read()))
    await lab.start(ctx)
    done = await lab.answer(ctx, {"decision": "reject", "reason": "wrong plate"})
    assert done.next == () and done.values["status"] == "rejected"
    assert done.values["report"]["steps_done"] == 0
    assert lab.world.physical_ops() == [] and lab.actions() == []
    assert lab.volume("reservoir", "A1") == DYE_UL


async def test_an_edit_request_goes_back_to_planning_with_the_persons_words(
    lab: TaskLab,
) -> None:
    first = transfer_and_read()
    second = make_plan(transfer("s1", ["A1"], volume=20.0), request="only A1, 20 uL")
    planner = FakePlanner(first, second)
    ctx = lab.context(planner)
    await lab.start(ctx, request="dye into row A then read")

    again = await lab.answer(ctx, {"decision": "edit", "text": "only A1, 20 uL"})
    assert planner.requests == ["dye into row A then read", "only A1, 20 uL"]
    asked = question(again)
    assert asked is not None and asked["kind"] == "approval"
    assert Plan.model_validate(asked["plan"]) == second
    assert asked["simulation"]["dispensed_ul"] == {"dye": 20.0}
    assert lab.world.physical_ops() == []

    done = await lab.answer(ctx, {"decision": "approve"})
    assert done.values["status"] == "done"
    assert lab.volume("plate_1", "A1") == 20.0 and lab.volume("plate_1", "A2") == 0.0
    assert lab.world.location_of("plate_1") == HOME
    each_step_executed_once(lab, second)


# --------------------------------------------------------------------------- simulation
def too_much_buffer() -> Plan:
    """Takes 2 x 160 uL from plate_1 B1, which holds 300 uL: the dry run must fail."""
    bad = step(
        "s1",
        "lh1",
        "transfer",
        source="plate_1",
        source_well="B1",
        destination="plate_1",
        destination_wells=["C1", "C2"],
        volume_ul=160.0,
        new_tip="once",
    )
    return make_plan(bad)


def unknown_plate() -> Plan:
    """Moves plate_9, which no instrument knows: the arm's dry run must fail."""
    return make_plan(
        transfer("s1", ["A1"]),
        step("s2", "arm1", "move_plate", plate="plate_9", to_location="hotel:1"),
    )


@pytest.mark.parametrize(
    ("plan", "failed_step"),
    [(too_much_buffer(), "s1"), (unknown_plate(), "s2")],
    ids=["more-than-the-well-holds", "unknown-labware"],
)
async def test_a_plan_that_fails_simulation_never_reaches_approval_or_the_instruments(
    lab: TaskLab, plan: Plan, failed_step: str
) -> None:
    ctx = lab.context(FakePlanner(plan))
    done = await lab.start(ctx)
    assert waiting_for(done) is None and done.next == ()
    assert done.values["status"] == "refused"
    simulation = lab.simulation(done)
    assert simulation["ok"] is False and simulation["failed_step"] == failed_step
    assert simulation["error"]["code"]
    assert done.values["report"]["steps_done"] == 0
    assert lab.world.physical_ops() == [] and lab.actions() == []
    assert not [e for e, _ in lab.events if e == "dispatch"]


async def test_a_step_on_an_unknown_instrument_fails_simulation(lab: TaskLab) -> None:
    plan = make_plan(step("s1", "centrifuge9", "spin", rpm=1000))
    done = await lab.start(lab.context(FakePlanner(plan)))
    assert done.values["status"] == "refused"
    assert lab.simulation(done)["error"]["code"] == "INVALID_ARGUMENT"
    assert lab.world.physical_ops() == []


async def test_a_planner_that_can_replan_gets_the_errors_once_then_the_run_is_refused(
    lab: TaskLab,
) -> None:
    planner = ReplanningPlanner(too_much_buffer(), too_much_buffer())
    done = await lab.start(lab.context(planner))
    assert len(planner.errors) == 1
    [errors] = planner.errors
    assert len(errors) == 1 and errors[0].startswith("s1:")
    assert "INSUFFICIENT_VOLUME" in errors[0]
    assert done.values["status"] == "refused" and done.values["replanned"] is True
    assert waiting_for(done) is None
    assert lab.world.physical_ops() == [] and lab.actions() == []


async def test_a_replanned_plan_that_simulates_goes_to_approval(lab: TaskLab) -> None:
    fixed = make_plan(transfer("s1", ["A1"]))
    planner = ReplanningPlanner(too_much_buffer(), fixed)
    waiting = await lab.start(lab.context(planner))
    asked = question(waiting)
    assert asked is not None and asked["kind"] == "approval"
    assert Plan.model_validate(asked["plan"]) == fixed
    assert len(planner.errors) == 1
    assert lab.world.physical_ops() == []


# --------------------------------------------------------------------------- no plan
@pytest.mark.parametrize(
    ("result", "status"),
    [
        (
            Clarification(
                request="add some dye",
                question="How much dye?",
                missing=["volume"],
                options=["a volume in uL"],
            ),
            "clarification",
        ),
        (Refusal(request="heat to 500 C", reason="hs1 reaches at most 100 C"), "refused"),
    ],
    ids=["clarification", "refusal"],
)
async def test_a_clarification_or_refusal_is_reported_and_nothing_moves(
    lab: TaskLab, result: Clarification | Refusal, status: str
) -> None:
    done = await lab.start(lab.context(FakePlanner(result)), request=result.request)
    assert waiting_for(done) is None and done.next == ()
    assert done.values["status"] == status
    report = done.values["report"]
    assert report["answer"] == result.model_dump(mode="json")
    assert (report["steps_total"], report["steps_done"], report["readings"]) == (0, 0, [])
    assert lab.world.physical_ops() == [] and lab.actions() == []


# --------------------------------------------------------------------------- real planners
async def test_the_rule_planner_plans_a_request_that_runs_end_to_end(lab: TaskLab) -> None:
    request = "transfer 50 uL of dye to plate_1 A1:A3 then read absorbance of plate_1 at 600 nm"
    ctx = lab.context(RulePlanner())
    waiting = await lab.start(ctx, request=request)
    asked = question(waiting)
    assert asked is not None and asked["kind"] == "approval"
    plan = Plan.model_validate(asked["plan"])
    assert asked["simulation"]["dispensed_ul"] == {"dye": 150.0}
    done = await lab.answer(ctx, {"decision": "approve"})
    assert done.values["status"] == "done"
    assert len(done.values["report"]["readings"]) == 1
    world_matches_expectations(lab, plan)
    each_step_executed_once(lab, plan)


def _plan_json(plan: Plan, request: str) -> str:
    """A model's answer: the plan with a trace giving its first step to the first clause and
    the rest to the last (the shape the coverage check asks every planner for)."""
    body = plan.model_dump(mode="json", exclude={"request"})
    first, *rest = clauses_of(request)
    ids = [s.id for s in plan.steps]
    body["trace"] = [{"clause": first, "understood": "x", "steps": ids[:1]}] + [
        {"clause": c, "understood": "x", "steps": ids[1:] or ids} for c in rest
    ]
    return json.dumps(body)


async def test_the_llm_planner_with_a_scripted_model_is_sent_back_once_then_runs(
    lab: TaskLab,
) -> None:
    fixed = make_plan(transfer("s1", ["A1", "A2"]), *read_steps(2))
    request = "dye into A1 and A2, then read"
    model = ScriptedModel(
        replies=[_plan_json(too_much_buffer(), request), _plan_json(fixed, request)]
    )
    ctx = lab.context(LLMPlanner(model))
    waiting = await lab.start(ctx, request=request)
    asked = question(waiting)
    assert asked is not None and asked["kind"] == "approval"
    planned = Plan.model_validate(asked["plan"])
    assert [(s.instrument, s.command) for s in planned.steps] == [
        (s.instrument, s.command) for s in fixed.steps
    ]
    assert waiting.values["replanned"] is True
    assert len(model.prompts) == 2 and "INSUFFICIENT_VOLUME" in model.human(1)
    done = await lab.answer(ctx, {"decision": "approve"})
    assert done.values["status"] == "done"
    assert lab.volume("plate_1", "A1") == lab.volume("plate_1", "A2") == 50.0
    assert lab.volume("plate_1", "C1") == 0.0 and lab.volume("plate_1", "B1") == 300.0
    assert lab.world.location_of("plate_1") == DRAWER


# --------------------------------------------------------------------------- separation
def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_task_agent_reaches_instruments_only_through_device_agents() -> None:
    sources = sorted((ROOT / "agents" / "task").rglob("*.py"))
    assert len(sources) > 5
    for path in sources:
        device_imports = {
            m
            for m in _imports(path)
            if m.startswith("device_servers") and not m.startswith("device_servers.contract")
        }
        assert device_imports == set(), path
        assert not {m for m in _imports(path) if m.startswith(("mcp.client", "mcp.server"))}, path
