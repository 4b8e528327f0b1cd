"""The task agent's nodes: interpret -> simulate -> approve -> dispatch <-> step -> report.

``dispatch`` and the ``step`` branches it sends (several at once, on different instruments)
live in :mod:`agents.task.lanes` and :mod:`agents.task.step`; ``escalate`` asks a person about
a step that needs one.

Nodes that call ``interrupt()`` (approve, escalate) hold only that and pure logic: LangGraph
re-runs an interrupted node from its start on resume. Side effects live in other nodes and are
safe to repeat: device actions are keyed by deterministic action ids (the server answers a
repeated id with the recorded outcome), and reads are reads.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from agents.task import approval as signoff
from agents.task import lanes
from agents.task.lab_view import build_lab_view
from agents.task.planning.models import Plan
from agents.task.simulate import headline, simulate_plan
from agents.task.state import TaskContext, TaskState


def _plan(state: TaskState, ctx: TaskContext) -> Plan:
    """The run's plan, found by its hash in the run records (validated once per process)."""
    return ctx.records.plan(str(state["plan_ref"]))


async def _lab_states(ctx: TaskContext) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Every instrument's state and tool names; a planner that reads tool descriptions (the
    LLM planner) gets each server's own tool list too."""
    states = {i: await a.state() for i, a in ctx.agents.items()}
    tools: dict[str, list[str]] = {}
    described: dict[str, list[dict[str, Any]]] = {}
    for i, a in ctx.agents.items():
        described[i] = await a.tools()
        tools[i] = [t["name"] for t in described[i]]
    if hasattr(ctx.planner, "tools") and not getattr(ctx.planner, "tools", None):
        ctx.planner.tools = described  # type: ignore[attr-defined]
    return states, tools


async def _ask(planner: Any, method: str, *args: Any) -> Any:
    """Call a planner, using its async form when it has one (an LLM call must not block)."""
    async_form = getattr(planner, f"a{method}", None)
    if async_form is not None:
        return await async_form(*args)
    return getattr(planner, method)(*args)


async def interpret(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["simulate", "report"]]:
    ctx = runtime.context
    states, tools = await _lab_states(ctx)
    view = build_lab_view(states, tools, ctx.policies)
    result = await _ask(ctx.planner, "plan", state["request"], view)
    ctx.tell("planned", kind=result.kind)
    if isinstance(result, Plan):
        return Command(
            goto="simulate",
            update={"outcome": "plan", "plan_ref": ctx.records.put_plan(result), "answer": None},
        )
    status = "clarification" if result.kind == "clarification" else "refused"
    return Command(
        goto="report",
        update={"outcome": result.kind, "answer": result.model_dump(mode="json"), "status": status},
    )


async def simulate(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["approve", "simulate", "report"]]:
    ctx = runtime.context
    plan = _plan(state, ctx)
    states = {i: await a.state() for i, a in ctx.agents.items()}
    sequential = bool(state.get("sequential", False))
    report = await simulate_plan(
        plan, ctx.agents, states, ctx.policies, sequential=sequential, window=ctx.window
    )
    ctx.tell("simulated", ok=report.ok, error=report.error)
    simulation_ref = ctx.records.put("simulation", report.model_dump(mode="json"))
    if report.ok:
        shown = signoff.basis(str(state["plan_ref"]), simulation_ref, ctx.policies, states)
        return Command(goto="approve", update={"simulation_ref": simulation_ref, "basis": shown})
    errors = [f"{report.failed_step}: {report.error}"]
    replan = getattr(ctx.planner, "replan", None)
    if replan is not None and not state.get("replanned"):
        states2, tools = await _lab_states(ctx)
        again = await _ask(
            ctx.planner,
            "replan",
            state["request"],
            build_lab_view(states2, tools, ctx.policies),
            plan,
            errors,
        )
        if isinstance(again, Plan):
            return Command(
                goto="simulate",
                update={"plan_ref": ctx.records.put_plan(again), "replanned": True},
            )
    return Command(
        goto="report",
        update={"simulation_ref": simulation_ref, "status": "refused"},
    )


def approve(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["confirm", "interpret", "report"]]:
    """Ask a person. Pure (it only reads the run records): on resume this re-runs and
    receives the person's answer.

    The question carries the basis (content hashes) of what is shown; the approval is checked
    against it, and against the instruments as they are then, by ``confirm``.
    """
    records = runtime.context.records
    sim = records.get(state.get("simulation_ref")) or {}
    plan = records.plan(str(state["plan_ref"])).model_dump(mode="json")
    shown = {"run_id": state["run_id"], "basis": state.get("basis")}
    answer = signoff.decision_of(
        interrupt(
            {
                "kind": "approval",
                "run_id": state["run_id"],
                "request": state["request"],
                "plan": plan,
                "simulation": {k: v for k, v in sim.items() if k != "predictions"},
                "needs_extra_approval": sim.get("needs_approval", []),
                "plan_ref": state["plan_ref"],
                "simulation_ref": state.get("simulation_ref"),
                "basis": state.get("basis"),
                "voided": state.get("voided"),
                **signoff.inbox_fields(
                    "approve_plan",
                    {**shown, "request": state["request"]},
                    signoff.describe_plan(state, plan, sim),
                    edit=True,
                    respond=True,
                ),
            }
        )
    )
    decision = answer.get("decision")
    if decision == "approve":
        # The steps run in the order the approved simulation's timeline gives (strictly one
        # after another when the person asks for that).
        sequential = bool(answer.get("sequential", state.get("sequential", False)))
        update = {"approval": answer, "schedule_ref": state.get("simulation_ref")}
        return Command(goto="confirm", update={**update, "sequential": sequential})
    if decision == "edit":
        text = str(answer.get("text") or "").strip() or state["request"]
        return Command(
            goto="interpret",
            update={
                "approval": answer,
                "request": text,
                "replanned": False,
                "previous_plan_ref": state.get("plan_ref"),
            },
        )
    return Command(goto="report", update={"approval": answer, "status": "rejected"})


def escalate(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["dispatch", "escalate", "replan", "report"]]:
    """Ask a person about the first step waiting for one (plan order); the others wait their
    turn. Pure: on resume this re-runs and receives the answer."""
    plan = _plan(state, runtime.context)
    waiting = lanes.escalated(state, plan)
    step_id = waiting[0]
    entry = dict((state.get("steps") or {})[step_id])
    escalation = dict(entry.get("escalation") or {})
    # The question is an escalation; what it is about (deviation, approval_required) is kept.
    about = escalation.pop("kind", "deviation")
    question = f"step {escalation.get('step')}: {escalation.get('reason')}"
    answer = signoff.decision_of(
        interrupt(
            {
                **escalation,
                "kind": "escalation",
                "about": about,
                "also_waiting": waiting[1:],
                **signoff.inbox_fields(
                    "answer_escalation",
                    {"run_id": state["run_id"], "step": escalation.get("step")},
                    f"{question}\n\nRespond with retry, skip, replan or abort.",
                    edit=False,
                    respond=True,
                ),
            }
        )
    )
    if answer.get("inbox") == "response":
        answer = {**answer, "decision": str(answer.get("text") or "").strip().lower()}
    if answer.get("inbox") == "ignore":
        answer = {**answer, "decision": "abort"}
    decision = answer.get("decision")
    obs = escalation.get("observation") or {}
    if decision == "retry" and obs.get("resume") is not None:
        # Only what is left: the in-doubt action under its own id, or the remainder.
        again = {"status": "retry", "failures": 0, "resume": obs["resume"]}
        again["attempt"] = int(obs.get("attempt", entry.get("attempt", 1))) + 1
        return Command(goto="dispatch", update={"steps": {step_id: again}})
    if decision == "retry":  # nothing can be sent safely: ask again, saying so
        reason = f"retry is not possible: {escalation.get('reason')}"
        entry["escalation"] = {**escalation, "kind": about, "reason": reason}
        return Command(goto="escalate", update={"steps": {step_id: entry}})
    if decision == "replan":
        return Command(goto="replan")
    if decision == "approved":  # a person granted the instrument's approval request
        entry.update(status="approved", escalation=None)
        return Command(goto="dispatch", update={"steps": {step_id: entry}})
    if decision == "skip":
        lane, position = lanes.lane_index(runtime.context.records, str(state["plan_ref"]))[step_id]
        return Command(
            goto="dispatch", update={"steps": {step_id: None}, "lanes": {lane: position + 1}}
        )
    return Command(goto="report", update={"status": "aborted"})


def report(state: TaskState, runtime: Runtime[TaskContext]) -> dict[str, Any]:
    """The run's report: outcome, steps done, readings, deviations (the observations read
    from the run records, page by page)."""
    records = runtime.context.records
    readings: list[dict[str, Any]] = []
    done: set[str] = set()
    simulated = True
    for o in records.observations(state["run_id"]):
        readings.extend(o.get("measurements", []))
        if o.get("ok"):
            done.add(o["step_id"])
        simulated = simulated and o.get("simulated", True)
    plan = records.plan(str(state["plan_ref"])) if state.get("plan_ref") else None
    status = state.get("status") or "failed"
    return {
        "status": status,
        "report": {
            "status": status,
            "request": state.get("request"),
            "summary": plan.summary if plan else None,
            "answer": state.get("answer"),
            "steps_total": len(plan.steps) if plan else 0,
            "steps_done": len(done),
            "readings": readings,
            "deviations": state.get("deviations", []),
            # The figures of the simulation; its per-step parts stay in the records (the
            # report is state: it must not grow with the plan).
            "simulation": headline(records.get(state.get("simulation_ref")) or {}),
            "simulated": simulated,
        },
    }
