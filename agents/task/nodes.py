"""The task agent's nodes: interpret -> simulate -> approve -> dispatch <-> check -> report.

Nodes that call ``interrupt()`` (approve, escalate) hold only that and pure logic: LangGraph
re-runs an interrupted node from its start on resume. Side effects live in other nodes and are
safe to repeat: device actions are keyed by deterministic action ids (the server answers a
repeated id with the recorded outcome), and reads are reads.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from agents.device.agent import Observation
from agents.task import approval as signoff
from agents.task import check as checks
from agents.task import recover
from agents.task.lab_view import build_lab_view
from agents.task.planning.models import Plan, PlanStep
from agents.task.simulate import simulate_plan
from agents.task.state import TaskContext, TaskState

# A step whose device agent could not reach its instrument is asked again (same action ids)
# this many times in a row before a person is asked.
MAX_FAILURES = 2


def _plan(state: TaskState, ctx: TaskContext) -> Plan:
    """The run's plan, found by its hash in the run records (validated once per process)."""
    return ctx.records.plan(str(state["plan_ref"]))


def _last(state: TaskState, ctx: TaskContext) -> Observation:
    """The newest observation of the run (what ``check`` decides on)."""
    return ctx.records.observation(state["run_id"], state.get("observed", 0) - 1)


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
    report = await simulate_plan(plan, ctx.agents, states, ctx.policies)
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
        return Command(goto="confirm", update={"approval": answer})
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


async def dispatch(state: TaskState, runtime: Runtime[TaskContext]) -> Command[Literal["check"]]:
    """Hand the next step to its instrument's device agent (at most once per action id)."""
    ctx = runtime.context
    plan = _plan(state, ctx)
    step = plan.steps[state["step"]]
    ctx.tell(
        "dispatch",
        step=step.id,
        index=state["step"],
        total=len(plan.steps),
        instrument=step.instrument,
        command=step.command,
        attempt=state.get("attempt", 1),
    )
    stopped = await recover.stopped_for(step, ctx.agents)
    if stopped:
        # An e-stopped instrument is never reached into: the arm does not move a plate to or
        # from it until a person has reset it.
        obs = Observation(
            step_id=step.id,
            instrument=step.instrument,
            command=step.command,
            action_id="",
            ok=False,
            error={
                "code": "ESTOP_ACTIVE",
                "detail": f"{', '.join(stopped)} is e-stopped: no plate is moved to or from it",
                "defined": False,
                "source": "task_agent",
            },
            resume={"mode": "again", "args": dict(step.args)},
        )
        return _observed(state, ctx, obs)
    obs = await ctx.agents[step.instrument].execute(
        step, state["run_id"], state.get("attempt", 1), resume=state.get("resume")
    )
    if obs.ok and step.command == "move_plate":
        await _after_move(ctx, step, obs)
    return _observed(state, ctx, obs)


def _observed(state: TaskState, ctx: TaskContext, obs: Observation) -> Command[Any]:
    """Record the observation at the run's cursor, then go to ``check``.

    Recorded before the checkpoint that moves the cursor past it: a re-run of ``dispatch``
    after a crash asks the same action id and records at the same place.
    """
    seq = state.get("observed", 0)
    ctx.records.record(state["run_id"], seq, obs)
    return Command(goto="check", update={"observed": seq + 1})


async def _after_move(ctx: TaskContext, step: PlanStep, obs: Observation) -> None:
    """Instruments a plate left or reached learn it by reading back (their twins)."""
    places = {str(step.args.get("to_location", ""))}
    places.update(str(e["data"].get("from", "")) for e in obs.events if e["type"] == "plate_moved")
    for owner in {p.split(":", 1)[0] for p in places if p}:
        if owner in ctx.agents and owner != step.instrument:
            await ctx.agents[owner].read_back()


def _next(state: TaskState, plan: Plan, **update: Any) -> Command[Any]:
    nxt = state["step"] + 1
    fresh = {"attempt": 1, "failures": 0, "completions": 0, "escalation": None, "resume": None}
    # Only what changes is written: each written key is a row of the checkpoint's writes.
    update.update({k: v for k, v in fresh.items() if state.get(k, v) != v}, step=nxt)
    if nxt >= len(plan.steps):
        return Command(goto="report", update={**update, "status": "done"})
    return Command(goto="dispatch", update=update)


async def check(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["dispatch", "escalate", "report"]]:
    """Compare the observation with the plan; continue, or go to a person."""
    ctx = runtime.context
    plan = _plan(state, ctx)
    step = plan.steps[state["step"]]
    obs = _last(state, ctx)
    failures = state.get("failures", 0)
    deviations = list(state.get("deviations", []))
    if obs.transport_error:
        # Only the pipe failed: ask again with the SAME action id (the server answers with
        # the recorded outcome if the action already happened).
        if failures + 1 < MAX_FAILURES:
            return Command(goto="dispatch", update={"failures": failures + 1})
        return _escalate(step, obs, "the instrument could not be reached twice", failures + 1)
    if obs.ok:
        wrong = checks.mismatches(step, obs) + [{"step": step.id, **d} for d in obs.deviations]
        if wrong:
            deviations.extend(wrong)
            return _escalate(
                step,
                obs,
                "the instrument reports something the plan did not expect",
                failures,
                deviations=deviations,
            )
        return _next(state, plan)
    # The device agent has read its instrument back and recovered what its rules allow.
    kind, reason = recover.failure_reason(step, obs)
    deviations.extend({"step": step.id, **d} for d in obs.deviations)
    return _escalate(step, obs, reason, failures + 1, kind=kind, deviations=deviations)


def _escalate(
    step: PlanStep,
    obs: Observation,
    reason: str,
    failures: int,
    kind: str = "deviation",
    deviations: list[dict[str, Any]] | None = None,
) -> Command[Any]:
    update: dict[str, Any] = {
        "failures": failures,
        "escalation": {
            "kind": kind,
            "step": step.id,
            "reason": reason,
            **recover.question(step, obs, reason),
            "observation": obs.model_dump(mode="json"),
        },
    }
    if deviations is not None:
        update["deviations"] = deviations
    return Command(goto="escalate", update=update)


def escalate(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["dispatch", "check", "escalate", "replan", "report"]]:
    """Ask a person what to do. Pure: on resume this re-runs and receives the answer."""
    escalation = dict(state.get("escalation") or {})
    # The question is an escalation; what it is about (deviation, approval_required) is kept.
    about = escalation.pop("kind", "deviation")
    question = f"step {escalation.get('step')}: {escalation.get('reason')}"
    answer = signoff.decision_of(
        interrupt(
            {
                **escalation,
                "kind": "escalation",
                "about": about,
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
        return Command(
            goto="dispatch",
            update={
                "attempt": int(obs.get("attempt", state.get("attempt", 1))) + 1,
                "failures": 0,
                "escalation": None,
                "resume": obs["resume"],
            },
        )
    if decision == "retry":  # nothing can be sent safely: ask again, saying so
        again = {**escalation, "kind": about, "reason": "retry is not possible: "}
        again["reason"] += str(escalation.get("reason"))
        return Command(goto="escalate", update={"escalation": again})
    if decision == "replan":
        return Command(goto="replan", update={"escalation": {**escalation, "kind": about}})
    if decision == "approved":  # a person granted the instrument's approval request
        return Command(goto="dispatch", update={"escalation": None})
    if decision == "skip":
        return _next(state, _plan(state, runtime.context))
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
            "simulation": {
                k: v
                for k, v in (records.get(state.get("simulation_ref")) or {}).items()
                if k != "predictions"
            },
            "simulated": simulated,
        },
    }
