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
from agents.task import check as checks
from agents.task.lab_view import build_lab_view
from agents.task.planning.models import Plan, PlanStep
from agents.task.simulate import simulate_plan
from agents.task.state import TaskContext, TaskState
from device_servers.contract import Code

# Codes after which the same step may be tried again, as a new action, once the instrument
# is safe and read back: the twin has then learned what went wrong (a tip not picked, a source
# holding less than believed -- the new attempt is then checked against the volume read back).
RECOVERABLE = {
    Code.NO_TIP,
    Code.TIPRACK_EMPTY,
    Code.TIP_ALREADY_ATTACHED,
    Code.DEVICE_BUSY,
    Code.GRIP_FAILED,
    Code.INSUFFICIENT_VOLUME,
}
MAX_FAILURES = 2
# Device errors after which the action may or may not have happened (its reply was lost).
LOST_OUTCOME = {Code.CONNECTION_LOST, Code.HARDWARE_TIMEOUT}
# Completions of one in-doubt action in a row. Each needs a crash during the previous one (a
# completion that runs ends done or failed), so this only bounds a crash loop; it is not a
# failure count: a step killed twice while completing is still completed, not escalated.
MAX_COMPLETIONS = 25


def _plan(state: TaskState) -> Plan:
    return Plan.model_validate(state["plan"])


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
    result = await _ask(ctx.planner, "plan", state["request"], build_lab_view(states, tools))
    ctx.tell("planned", kind=result.kind)
    if isinstance(result, Plan):
        return Command(
            goto="simulate",
            update={"outcome": "plan", "plan": result.model_dump(mode="json"), "answer": None},
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
    plan = _plan(state)
    states = {i: await a.state() for i, a in ctx.agents.items()}
    report = await simulate_plan(plan, ctx.agents, states, ctx.policies)
    ctx.tell("simulated", ok=report.ok, error=report.error)
    if report.ok:
        return Command(goto="approve", update={"simulation": report.model_dump(mode="json")})
    errors = [f"{report.failed_step}: {report.error}"]
    replan = getattr(ctx.planner, "replan", None)
    if replan is not None and not state.get("replanned"):
        states2, tools = await _lab_states(ctx)
        again = await _ask(
            ctx.planner, "replan", state["request"], build_lab_view(states2, tools), plan, errors
        )
        if isinstance(again, Plan):
            return Command(
                goto="simulate",
                update={"plan": again.model_dump(mode="json"), "replanned": True},
            )
    return Command(
        goto="report",
        update={"simulation": report.model_dump(mode="json"), "status": "refused"},
    )


def approve(state: TaskState) -> Command[Literal["dispatch", "interpret", "report"]]:
    """Ask a person. Pure: on resume this re-runs and receives the person's answer."""
    sim = state.get("simulation") or {}
    answer = interrupt(
        {
            "kind": "approval",
            "request": state["request"],
            "plan": state["plan"],
            "simulation": {k: v for k, v in sim.items() if k != "predictions"},
            "needs_extra_approval": sim.get("needs_approval", []),
        }
    )
    decision = (answer or {}).get("decision")
    if decision == "approve":
        return Command(
            goto="dispatch",
            update={"approval": answer, "step": 0, "attempt": 1, "failures": 0},
        )
    if decision == "edit":
        text = str(answer.get("text") or "").strip() or state["request"]
        return Command(
            goto="interpret", update={"approval": answer, "request": text, "replanned": False}
        )
    return Command(goto="report", update={"approval": answer, "status": "rejected"})


async def dispatch(state: TaskState, runtime: Runtime[TaskContext]) -> Command[Literal["check"]]:
    """Hand the next step to its instrument's device agent (at most once per action id)."""
    ctx = runtime.context
    plan = _plan(state)
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
    obs = await ctx.agents[step.instrument].execute(step, state["run_id"], state.get("attempt", 1))
    if obs.ok and step.command == "move_plate":
        await _after_move(ctx, step, obs)
    return Command(goto="check", update={"observations": _observations(state, obs)})


def _observations(state: TaskState, obs: Observation) -> list[dict[str, Any]]:
    """The run's observations with ``obs`` appended.

    Only the newest keeps the instrument's whole state (``check`` compares it with the plan);
    older ones drop it -- the audit log keeps every state read -- so each checkpoint grows by
    the step's result, not by a whole instrument state (about 5 kB for a liquid handler), and
    writing checkpoints stays cheap on runs of thousands of steps.
    """
    older = [{**o, "state": {}} if o.get("state") else o for o in state.get("observations", [])]
    return [*older, obs.model_dump(mode="json")]


async def _after_move(ctx: TaskContext, step: PlanStep, obs: Observation) -> None:
    """Instruments a plate left or reached learn it by reading back (their twins)."""
    places = {str(step.args.get("to_location", ""))}
    places.update(str(e["data"].get("from", "")) for e in obs.events if e["type"] == "plate_moved")
    for owner in {p.split(":", 1)[0] for p in places if p}:
        if owner in ctx.agents and owner != step.instrument:
            await ctx.agents[owner].read_back()


def _next(state: TaskState, plan: Plan, **update: Any) -> Command[Any]:
    nxt = state["step"] + 1
    update.update(step=nxt, attempt=1, failures=0, completions=0, escalation=None)
    if nxt >= len(plan.steps):
        return Command(goto="report", update={**update, "status": "done"})
    return Command(goto="dispatch", update=update)


async def check(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["dispatch", "escalate", "report"]]:
    """Compare the observation with the plan; continue, retry safely, or go to a person."""
    ctx = runtime.context
    plan = _plan(state)
    step = plan.steps[state["step"]]
    obs = Observation.model_validate(state["observations"][-1])
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
    code = obs.code
    agent = ctx.agents[step.instrument]
    if code is Code.ACTION_IN_DOUBT:
        back = await agent.read_back(state["run_id"], "resolve an action in doubt")
        completions = state.get("completions", 0)
        if obs.action_id in (back.get("resumable") or {}) and completions < MAX_COMPLETIONS:
            # The instrument told exactly which of the action's operations happened: asked
            # again under the same id, the server sends only the rest, once.
            ctx.tell(
                "in_doubt_resolved",
                step=step.id,
                how="read back: completing the rest",
                **back["resumable"][obs.action_id],
            )
            return Command(goto="dispatch", update={"completions": completions + 1})
        obs.state = await agent.state()
        if checks.satisfied(step, obs):
            ctx.tell("in_doubt_resolved", step=step.id, how="read back: the effect is there")
            return _next(state, plan, deviations=deviations)
        return _escalate(
            step,
            obs,
            "the action's outcome is unknown and the read back does not show its effect",
            failures,
        )
    if code in LOST_OUTCOME:
        # The instrument stopped answering mid-action: the action, or only its reply, was
        # lost. Read it back; if the step's effect is there it happened once and is never
        # sent again (a retry would do it twice). Otherwise a person decides, as before.
        back = await agent.read_back(state["run_id"], f"{code}: did the action happen?")
        obs.state = await agent.state()
        if back.get("ok") and checks.satisfied(step, obs):
            ctx.tell(
                "in_doubt_resolved", step=step.id, how=f"{code}; read back: the effect is there"
            )
            return _next(state, plan, deviations=deviations)
    if code is Code.APPROVAL_REQUIRED:
        return _escalate(
            step,
            obs,
            "the instrument needs a person's approval for this action",
            failures,
            kind="approval_required",
        )
    deviations.extend({"step": step.id, **d} for d in obs.deviations)
    if code in RECOVERABLE and failures + 1 < MAX_FAILURES:
        done = await agent.make_safe(state["run_id"], step, state.get("attempt", 1))
        ctx.tell("retry", step=step.id, code=code, made_safe=done)
        return Command(
            goto="dispatch",
            update={
                "failures": failures + 1,
                "attempt": state.get("attempt", 1) + 1,
                "deviations": deviations,
            },
        )
    if obs.error and obs.error.get("defined", False):
        await agent.make_safe(state["run_id"], step, state.get("attempt", 1))
    return _escalate(
        step, obs, f"the instrument reported {code}", failures + 1, deviations=deviations
    )


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
            "observation": obs.model_dump(mode="json"),
        },
    }
    if deviations is not None:
        update["deviations"] = deviations
    return Command(goto="escalate", update=update)


def escalate(state: TaskState) -> Command[Literal["dispatch", "check", "report"]]:
    """Ask a person what to do. Pure: on resume this re-runs and receives the answer."""
    escalation = dict(state.get("escalation") or {})
    # The question is an escalation; what it is about (deviation, approval_required) is kept.
    about = escalation.pop("kind", "deviation")
    answer = interrupt({**escalation, "kind": "escalation", "about": about})
    decision = (answer or {}).get("decision")
    if decision == "retry":  # same step, a new action (after the person checked it)
        return Command(
            goto="dispatch",
            update={"attempt": state.get("attempt", 1) + 1, "failures": 0, "escalation": None},
        )
    if decision == "approved":  # a person granted the instrument's approval request
        return Command(goto="dispatch", update={"escalation": None})
    if decision == "skip":
        plan = _plan(state)
        return _next(state, plan)
    return Command(goto="report", update={"status": "aborted"})


def report(state: TaskState) -> dict[str, Any]:
    """The run's report: outcome, steps done, readings, deviations."""
    observations = state.get("observations", [])
    readings = [m for o in observations for m in o.get("measurements", [])]
    done = sorted({o["step_id"] for o in observations if o.get("ok")})
    plan = state.get("plan") or {}
    status = state.get("status") or "failed"
    return {
        "status": status,
        "report": {
            "status": status,
            "request": state.get("request"),
            "summary": plan.get("summary"),
            "answer": state.get("answer"),
            "steps_total": len(plan.get("steps", [])),
            "steps_done": len(done),
            "readings": readings,
            "deviations": state.get("deviations", []),
            "simulation": {
                k: v for k, v in (state.get("simulation") or {}).items() if k != "predictions"
            },
            "simulated": all(o.get("simulated", True) for o in observations),
        },
    }
