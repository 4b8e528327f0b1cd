"""A device agent's own recovery, within the ``recovery:`` rules of its instrument's policy.

After a failed action the agent never sends the step again whole. It reads the instrument back
and then, only where the rules allow (``policies.recovery``):

- an action whose outcome is unknown (a server restart, a lost reply, a hang, an e-stop or a
  cancel cutting in) is completed through its OWN action id, once the read back shows exactly
  how far it got, and only when what is left is what the rules let it finish alone;
- after a failure the rules name (a tip pick-up that failed, a gripper that closed on
  nothing), what is left is sent as a new action whose arguments say exactly that (the
  server's ``remainder``); a tip left on a channel is dropped first if the rest starts with a
  pick-up;
- everything else goes to a person, with which destinations were served and how a "retry"
  would continue (``Observation.resume``), which means the same thing: only what is left.

Every decision is audited with its reason (tool ``recover`` in the audit log).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents.device.observation import Observation, action_id_for
from agents.task.planning.models import PlanStep

if TYPE_CHECKING:
    from agents.device.agent import DeviceAgent

MAX_ROUNDS = 8  # local recoveries within one dispatch of a step


async def continue_step(
    agent: DeviceAgent, step: PlanStep, run_id: str, attempt: int, resume: dict[str, Any]
) -> Observation:
    """A person's retry (or a continuation after an e-stop reset): read back first, then only
    what is left: the in-doubt action under its own id, or the remainder as a new action."""
    note = f"{step.id}: a person said retry; read back before anything is sent again"
    back = await agent.read_back(run_id, note)
    mode = resume.get("mode")
    if back.get("estop"):
        obs = _refused(step, agent, resume, "ESTOP_ACTIVE", "the emergency stop is still active")
    elif mode == "complete":
        obs = await agent.act(step, run_id, str(resume["action_id"]), dict(resume["args"]))
        obs.attempt = int(resume.get("attempt", attempt))
    else:
        args = dict(resume.get("args") or step.args)
        obs = await _send_rest(agent, step, run_id, args, attempt, "a person's retry")
    agent.decide(
        run_id,
        f"{step.id}: a person's retry continues with {mode}: {obs.action_id}",
        action_id=obs.action_id,
        mode=mode,
    )
    obs.served = list(resume.get("served", []))
    return obs


def _refused(
    step: PlanStep, agent: DeviceAgent, resume: dict[str, Any], code: str, detail: str
) -> Observation:
    return Observation(
        step_id=step.id,
        instrument=agent.instrument,
        command=step.command,
        action_id=str(resume.get("action_id") or ""),
        ok=False,
        error={"code": code, "detail": detail, "defined": False, "source": "device_agent"},
        args=dict(resume.get("args") or {}),
        attempt=int(resume.get("attempt", 1)),
        resume=resume,
    )


async def recover_locally(
    agent: DeviceAgent,
    step: PlanStep,
    run_id: str,
    obs: Observation,
    resume: dict[str, Any] | None = None,
) -> Observation:
    """Recover from ``obs`` as the rules allow; return the step's last observation, with what
    was served and how a person's retry would continue when it still failed."""
    rules = agent.recovery
    served = list(obs.served)
    used: dict[int, int] = {}
    dropped = False
    for _ in range(MAX_ROUNDS):
        served = _served(served, obs)
        if obs.ok or obs.transport_error or (obs.code == "ESTOP_ACTIVE" and not obs.in_doubt):
            break
        if obs.in_doubt or obs.code == "ACTION_IN_DOUBT":
            again = await _in_doubt(agent, step, run_id, obs)
            if again is None:
                break
            obs = again
            continue
        ops = obs.operations or {}
        rest = ops.get("remainder") if obs.operations is not None else obs.args
        rule = rules.again_for(obs.code, (ops.get("next") or {}).get("op"))
        if rule is not None and rest is not None and used.get(id(rule), 0) < rule.max:
            used[id(rule)] = used.get(id(rule), 0) + 1
            reason = f"{obs.code}: {rule.reason or 'the rules allow what is left again'}"
            await agent.read_back(run_id, reason)
            obs = await _send_rest(agent, step, run_id, dict(rest), obs.attempt + 1, reason)
            continue
        if (
            obs.code == "TIP_ALREADY_ATTACHED"
            and rules.used_tip_on_channel == "drop"
            and rest is not None
            and not dropped
        ):
            dropped = True
            reason = "a used tip was left on a channel: dropped before the next pick-up"
            await agent.drop_used_tips(run_id, step, obs.attempt, reason)
            obs = await _send_rest(agent, step, run_id, dict(rest), obs.attempt + 1, reason)
            continue
        break
    if not obs.ok and obs.resume is None:
        obs.resume = resume_for(obs)
    if not (obs.ok or obs.transport_error or obs.in_doubt or obs.code == "ACTION_IN_DOUBT"):
        await _make_safe(agent, step, run_id, obs)
    obs.served = served
    record = (obs.operations or {}).get("summary") or {}
    obs.not_served = [w for w in record.get("not_served", []) if w not in served]
    if obs.resume is not None:
        obs.resume["served"] = served
    return obs


async def _in_doubt(
    agent: DeviceAgent, step: PlanStep, run_id: str, obs: Observation
) -> Observation | None:
    """Read an in-doubt action back; complete it under its own id when the read back shows
    how far it got and the rules let the agent finish what is left. None: a person decides
    (``obs`` then carries what the read back showed)."""
    cause = "restart" if obs.code == "ACTION_IN_DOUBT" else str(obs.code)
    back = await agent.read_back(run_id, f"{cause}: which operations of {obs.action_id} happened?")
    record = (back.get("progress") or {}).get(obs.action_id)
    if record:
        obs.operations = record
    obs.resume = {
        "mode": "complete",
        "action_id": obs.action_id,
        "args": dict(obs.args),
        "attempt": obs.attempt,
    }
    point = (back.get("resumable") or {}).get(obs.action_id)
    if point is None or back.get("estop"):
        return None
    left = list((record or {}).get("left", []))
    where = f"{point['done']} of {point['of']} operations of {obs.action_id} happened"
    if not agent.recovery.may_complete(cause, left):
        agent.decide(
            run_id,
            f"{cause}: {where} (read back); {', '.join(left)} left: a person decides",
            action_id=obs.action_id,
        )
        return None
    agent.decide(
        run_id,
        f"{cause}: {where} (read back); completing the rest under its own id",
        action_id=obs.action_id,
    )
    agent.tell("in_doubt_resolved", step=step.id, how="read back: completing the rest", **point)
    again = await agent.act(step, run_id, obs.action_id, dict(obs.args))
    again.attempt = obs.attempt
    return again


async def _send_rest(
    agent: DeviceAgent,
    step: PlanStep,
    run_id: str,
    args: dict[str, Any],
    attempt: int,
    reason: str,
) -> Observation:
    """What is left of the step, as a new action (a tip left on a channel dropped first when
    the rest starts with a pick-up and the rules say so)."""
    state = agent._last_state or {}
    tipped = any(c.get("tip") for c in state.get("channels", []))
    drop = agent.recovery.used_tip_on_channel == "drop"
    if tipped and drop and _starts_with_pick(step.command, args):
        await agent.drop_used_tips(
            run_id, step, attempt, f"{reason}; a used tip was on a channel: dropped first"
        )
    action_id = action_id_for(run_id, step, attempt)
    agent.decide(run_id, f"{reason}; sent what is left as {action_id}", args=args)
    obs = await agent.act(step, run_id, action_id, args)
    obs.attempt = attempt
    return obs


async def _make_safe(agent: DeviceAgent, step: PlanStep, run_id: str, obs: Observation) -> None:
    """After a failure that goes to a person: drop a tip the rest does not need (it holds
    nothing yet), so the instrument is left clean; the rest then starts with a pick-up. A
    tip holding liquid, or one the rest continues with, stays where it is."""
    if agent.recovery.used_tip_on_channel != "drop":
        return
    state = agent._last_state or {}
    tips = [c for c in state.get("channels", []) if c.get("tip")]
    resume = obs.resume or {}
    args = dict(resume.get("args") or {})
    unused = all(not c.get("volume_ul") for c in tips)
    if not tips or not unused or resume.get("mode") not in ("remainder", "again"):
        return
    if step.command == "transfer" and int(args.get("first_done", 0)) > 1:
        return  # the rest continues with the tip (it dispensed and mixes, or drops it)
    if step.command not in ("transfer", "pick_up_tips"):
        return
    await agent.drop_used_tips(
        run_id, step, obs.attempt, f"make safe after {obs.code}: an unused tip is dropped"
    )
    if step.command == "transfer" and args.get("first_done"):
        args["first_done"] = 0
        resume["args"] = args


def _starts_with_pick(command: str, args: dict[str, Any]) -> bool:
    return command == "pick_up_tips" or (command == "transfer" and not args.get("first_done"))


def _served(served: list[str], obs: Observation) -> list[str]:
    record = (obs.operations or {}).get("summary") or {}
    return served + [w for w in record.get("served", []) if w not in served]


def resume_for(obs: Observation) -> dict[str, Any] | None:
    """How a person's retry continues a failed step: only ever what is left."""
    ops = obs.operations
    if obs.transport_error or obs.in_doubt or obs.code == "ACTION_IN_DOUBT":
        # The reply (or the server) was lost: only the same action id may be asked again.
        return {
            "mode": "complete",
            "action_id": obs.action_id,
            "args": dict(obs.args),
            "attempt": obs.attempt,
        }
    if ops is None or int(ops.get("done", 0)) == 0:
        return {"mode": "again", "args": dict(obs.args)}  # nothing of it happened
    if ops.get("remainder") is not None:
        return {"mode": "remainder", "args": dict(ops["remainder"])}
    return None
