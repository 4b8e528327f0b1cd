"""What the task agent does when a step failed after its device agent's own recovery.

The device agent has already read its instrument back and done what its rules allow; what is
left goes to a person, told which destinations were served and which were not, what is known
of an action in doubt and what is not, and how each answer continues. An e-stop stops the
run: the interrupted step is never counted done, and no other instrument moves a plate to or
from the stopped one (:func:`stopped_for`). Pure functions, apart from reading states.
"""

from __future__ import annotations

from typing import Any

from agents.device.agent import DeviceAgent, Observation
from agents.task.planning.models import PlanStep

OPTIONS = {
    "retry": "send only what is left (an action in doubt completed under its own id)",
    "skip": "leave this step as it is and go on",
    "replan": "plan the remaining steps again from what the instruments report",
    "abort": "stop the run",
}


def question(step: PlanStep, obs: Observation, reason: str) -> dict[str, Any]:
    """The facts a person is asked with: served and not, known and unknown, the options."""
    ops = obs.operations or {}
    summary = ops.get("summary") or {}
    known: list[str] = []
    unknown: list[str] = []
    if ops:
        known.append(f"{ops.get('done', 0)} of {ops.get('of', '?')} operations happened")
    for well, cell in (summary.get("wells") or {}).items():
        mixed = cell.get("mix_cycles") or [0, 0]
        if mixed[1]:
            known.append(f"{well} mixed {mixed[0]} of {mixed[1]} times")
    tips = [c.get("channel") for c in (obs.state.get("channels") or []) if c.get("tip")]
    if tips:
        known.append(f"a tip is on channel {', '.join(str(t) for t in tips)}")
    nxt = ops.get("next") or {}
    if obs.in_doubt and not ops.get("resolved", False):
        unknown.append(
            f"whether the {nxt.get('op', 'operation')} under way happened: the read back "
            "could not tell"
        )
    served = ", ".join(obs.served) or "none"
    not_served = ", ".join(obs.not_served) or "none"
    text = f"{step.id} ({step.command} on {step.instrument}): {reason}. Served: {served}."
    text += f" Not served: {not_served}."
    if known:
        text += " Known: " + "; ".join(known) + "."
    if unknown:
        text += " Unknown: " + "; ".join(unknown) + "."
    options = dict(OPTIONS)
    if obs.resume is None:
        options["retry"] = "not possible: nothing can be sent safely before a person checks"
    return {
        "question": text,
        "served": list(obs.served),
        "not_served": list(obs.not_served),
        "known": known,
        "unknown": unknown,
        "options": options,
    }


def failure_reason(step: PlanStep, obs: Observation) -> tuple[str, str]:
    """(kind, reason) of a failed step for the escalation."""
    code = obs.code
    if code == "ESTOP_ACTIVE":
        return "estop", (
            f"the emergency stop of {step.instrument} was pressed (ESTOP_ACTIVE): the run is "
            "stopped and this step is not done"
        )
    if code == "APPROVAL_REQUIRED":
        return "approval_required", "the instrument needs a person's approval for this action"
    if obs.in_doubt or code == "ACTION_IN_DOUBT":
        return "deviation", f"the outcome of {obs.action_id} is in doubt ({code})"
    return "deviation", f"the instrument reported {code}"


async def stopped_for(step: PlanStep, agents: dict[str, DeviceAgent]) -> list[str]:
    """Instruments a plate move would reach into that are e-stopped (none may be touched)."""
    if step.command != "move_plate":
        return []
    mover = agents[step.instrument]
    state = await mover.state()
    plate = str(step.args.get("plate", ""))
    here = ((state.get("labware") or {}).get(plate) or {}).get("location") or ""
    owners = {
        str(where).split(":", 1)[0] for where in (here, step.args.get("to_location")) if where
    }
    out = []
    for owner in sorted(owners):
        agent = agents.get(owner)
        if agent is not None and owner != step.instrument and (await agent.state()).get("estop"):
            out.append(owner)
    return out


def served_so_far(observations: list[dict[str, Any]], step_id: str) -> list[str]:
    """Destinations of a step served over all its dispatches (for a replan of the rest)."""
    out: list[str] = []
    for o in observations:
        if o.get("step_id") == step_id:
            out += [w for w in o.get("served", []) if w not in out]
    return out
