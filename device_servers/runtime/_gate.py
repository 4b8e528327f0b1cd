"""The gate: what must hold before a command may run, checked in the server on every call.

E-stop, a stale twin, the execution setting, the action id, then the instrument's policy
(deny, or a person's approval bound to the exact call). A dry run is never refused for the
latches: it is answered with warnings. ``preflight`` gates a whole protocol step by step on
the belief each step will meet.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from device_servers.contract import Protocol
from device_servers.errors import Code, DeviceError, GateRefused, ValidationFailed
from device_servers.kind import Twin
from device_servers.runtime import _trail as trail
from device_servers.runtime._policy import (
    APPROVAL_WARNING,
    denied,
    dry_run_check,
    policy_request,
)
from device_servers.runtime._status import Status, breathe
from device_servers.runtime._trial import (
    Assume,
    Trial,
    at_step,
)
from policies import Verdict
from state_store import args_hash

# Commands every server has that are not instrument motions.
CONTROL_COMMANDS = ("reset_estop", "confirm_state")

__all__ = [
    "APPROVAL_WARNING",
    "CONTROL_COMMANDS",
    "Gate",
    "denied",
    "dry_run_check",
    "policy_request",
]


class Gate:
    """Refuses what must not run on one instrument; warns a dry run of what would be refused."""

    def __init__(self, status: Status) -> None:
        self.s = status

    def check(
        self,
        name: str,
        cmd: BaseModel | None,
        dry_run: bool,
        action_id: str | None,
        digest: str,
        args: dict[str, Any],
        context: dict[str, Any] | None = None,
    ) -> list[str]:
        """Refuse what must not run; return warnings for a dry run."""
        s = self.s
        warnings: list[str] = []
        if not dry_run:
            if s.estop and name not in CONTROL_COMMANDS:
                raise GateRefused(
                    Code.ESTOP_ACTIVE,
                    "the emergency stop is active",
                    "a person clears it with reset_estop (needs approval), then read_back",
                )
            if s.stale_reason and name not in CONTROL_COMMANDS:
                raise GateRefused(
                    Code.STATE_STALE,
                    f"the twin is stale: {s.stale_reason}",
                    "call read_back to re-read the instrument, then retry",
                )
            # Control commands move nothing: with execution disabled (the hardware default)
            # a person can still reset an e-stop or confirm the state.
            if not s.config.execution_allowed and name not in CONTROL_COMMANDS:
                raise GateRefused(
                    Code.REAL_EXECUTION_DISABLED,
                    f"execution is disabled on {s.id}",
                    "use dry_run=true, or have an operator set allow_execution in the lab config",
                )
            if not action_id:
                raise ValidationFailed(
                    Code.INVALID_ARGUMENT,
                    "action_id is required when dry_run is false",
                    "pass a unique action_id derived from (run, step, "
                    "operation); reuse it only to ask again",
                )
        else:
            if s.estop:
                warnings.append("the emergency stop is active: this could not execute now")
            if s.stale_reason:
                warnings.append(
                    f"the twin is stale ({s.stale_reason}): the prediction may be wrong"
                )
        decision = s.policy.evaluate(policy_request(s.id, s.driver, name, cmd, dry_run, context))
        if decision.verdict is Verdict.DENY:
            raise denied(decision)
        if decision.verdict is Verdict.REQUIRE_APPROVAL:
            if dry_run:
                warnings.append(f"{APPROVAL_WARNING}: {decision.reason}")
            else:
                # Bound to exactly this call and the state it is asked in; used up when the
                # action acts (not here: a call refused later must not spend it).
                s.approved[action_id or ""] = trail.ask(
                    s, name, action_id or "", args, digest, decision.reason, decision.rule_id
                )
        return warnings

    async def context(
        self, cmd: BaseModel, twin: Twin | None = None, assumed: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Facts the policies may need that only the instrument (or the lab) can tell.

        ``twin``: the belief the command will meet (a protocol's earlier steps simulated);
        ``assumed``: facts a simulation assumes other instruments will have made true.
        """
        read = self.s.driver.policy_context
        twin = self.s.twin if twin is None else twin
        if assumed:
            return dict(await read(cmd, twin, assumed=assumed))
        return dict(await read(cmd, twin))

    async def preflight(
        self, proto: Protocol, cmds: list[BaseModel], dry_run: bool
    ) -> dict[int, list[str]]:
        """Gate every step of a protocol before a run starts.

        Each step's facts are those its earlier steps leave (a plate locked by step 0). A real
        run also refuses a step that needs a person's approval (approvals are per action),
        and refuses to start when the whole protocol does not simulate. Returns each step's
        warnings (a dry run reports them as events of that step).
        """
        warned: dict[int, list[str]] = {}
        s = self.s
        trial: Trial | None = Trial.of(s.driver, s.twin)
        failure: DeviceError | None = None  # the first step the simulation refuses
        for i, (step, cmd) in enumerate(zip(proto.steps, cmds, strict=True)):
            await breathe(i)  # a 10,000-step validation never holds an e-stop back
            if isinstance(cmd, Assume):
                if trial is not None:
                    trial.run(cmd)
                continue
            digest = args_hash(step.command, cmd.model_dump(mode="json"))
            try:
                context = await self.context(
                    cmd, trial.twin if trial else None, trial.assumed if trial else None
                )
                warned[i] = self.check(step.command, cmd, True, None, digest, {}, context)
            except DeviceError as exc:
                at_step(exc, i)
                raise
            if trial is not None:
                try:
                    trial.run(cmd)
                except DeviceError as exc:
                    failure = at_step(exc, i, step.command)
                    trial = None  # later steps see the belief
            if (
                not dry_run
                and s.policy.evaluate(
                    policy_request(s.id, s.driver, step.command, cmd, False, context)
                ).verdict
                is not Verdict.ALLOW
            ):
                raise GateRefused(
                    Code.APPROVAL_REQUIRED,
                    f"step {i} ({step.command}) needs a person's approval",
                    "execute that step as its own command so a person can approve its action_id",
                )
        if not dry_run:
            self.check("start_run", None, False, "run", "", {})
            if s.active_run is not None:
                raise GateRefused(
                    Code.DEVICE_BUSY,
                    f"run {s.active_run} is executing",
                    "wait for it or cancel_run it",
                    retriable=True,
                )
            if failure is not None:
                raise failure  # the whole protocol must simulate before anything moves
        return warned
