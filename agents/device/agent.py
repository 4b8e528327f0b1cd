"""A device agent: one instrument, one persistent MCP session, that instrument's rules.

The task agent hands it one plan step at a time; it never sees device tools itself. The device
agent checks its instrument's policy first, calls the tool with a deterministic ``action_id``
(so a step re-run after a crash asks the same question and gets the recorded answer), reads
the state back after acting and returns a structured :class:`Observation`. After a failure it
recovers on its own within the ``recovery:`` rules of its policy (:mod:`agents.device.recovery`):
only ever what is left of the step, and an action in doubt only through its own id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import anyio
from mcp.types import CallToolResult, ListToolsResult

from agents.device import recovery
from agents.device.observation import (
    TRANSPORT_ERRORS,
    Observation,
    action_id_for,
    structured,
)
from agents.task.planning.models import PlanStep
from device_servers.contract import Code, ErrorInfo
from policies import PolicyEngine, PolicyRequest, RecoveryRules, Verdict
from state_store import AuditLog

__all__ = ["TRANSPORT_ERRORS", "DeviceAgent", "Observation", "action_id_for", "structured"]


class ToolSession(Protocol):
    """What a device agent needs of its MCP session (an ``mcp.ClientSession`` has it)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> CallToolResult: ...

    async def list_tools(self) -> ListToolsResult: ...


class DeviceAgent:
    """Bound to ONE instrument's MCP session and policy."""

    def __init__(
        self,
        instrument: str,
        kind: str,
        session: ToolSession,
        policy: PolicyEngine | None = None,
        call_timeout_s: float = 600.0,
        audit: AuditLog | None = None,
        progress: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        self.instrument = instrument
        self.kind = kind
        self.session = session
        self.policy = policy
        self.call_timeout_s = call_timeout_s
        self.audit = audit
        self.progress = progress
        self._last_state: dict[str, Any] | None = None

    @property
    def recovery(self) -> RecoveryRules:
        """What this agent may do on its own after a failure (its policy's ``recovery:``)."""
        return self.policy.recovery if self.policy is not None else RecoveryRules()

    def tell(self, what: str, **data: Any) -> None:
        if self.progress is not None:
            self.progress(what, data)

    def decide(
        self,
        run_id: str,
        note: str,
        tool: str = "recover",
        result: dict[str, Any] | None = None,
        **args: Any,
    ) -> None:
        """Audit one decision this agent took on its own (a local recovery) with its reason."""
        if self.audit is not None:
            self.audit.append(
                run_id=run_id,
                agent=f"device:{self.instrument}",
                tool=tool,
                args=args,
                decision_note=note,
                result=result or {"ok": True},
            )

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        """One tool call; transport failures raise, device errors come back as payloads."""
        with anyio.fail_after(self.call_timeout_s):
            result = await self.session.call_tool(tool, args)
        return structured(result)

    async def tools(self) -> list[dict[str, Any]]:
        """The instrument's tool list (names, descriptions, input schemas)."""
        with anyio.fail_after(self.call_timeout_s):
            listed = await self.session.list_tools()
        return [t.model_dump(mode="json") for t in listed.tools]

    def forget_state(self) -> None:
        """The last state read no longer holds (the instrument's server was restarted)."""
        self._last_state = None

    async def state(self) -> dict[str, Any]:
        payload = await self.call("get_state")
        self._last_state = dict(payload.get("state", {}))
        return self._last_state

    async def read_back(self, run_id: str | None = None, note: str = "") -> dict[str, Any]:
        """Re-read the instrument; audited under ``run_id`` when one is given (a decision
        that rests on a fresh read must show it in the audit log)."""
        payload = await self.call("read_back")
        if self.audit is not None and run_id is not None:
            self.audit.append(
                run_id=run_id,
                agent=f"device:{self.instrument}",
                tool="read_back",
                args={},
                state_after=payload.get("state"),
                decision_note=note,
                result={"ok": bool(payload.get("ok")), "stale": payload.get("stale")},
            )
        return payload

    def check_policy(self, step: PlanStep) -> dict[str, Any] | None:
        """The instrument's rules, checked before calling; an error payload when denied.

        The request is built as the server's gate builds its own (every number of the
        arguments, nested ones such as a profile's step temperatures too). Left to the server:
        ``require_state`` rules (facts only it reads), the labware a command touches and
        figures a kind derives from its arguments (a profile's duration), which need the
        kind's own command models.
        """
        if self.policy is None:
            return None
        request = PolicyRequest.for_args(
            self.instrument, step.command, step.args, dry_run=False, facts_known=False
        )
        decision = self.policy.evaluate(request)
        if decision.verdict is Verdict.DENY:
            denied = ErrorInfo(
                code=Code.POLICY_DENIED,
                detail=decision.reason,
                fix_hint=decision.fix_hint,
                defined=True,
                retriable=False,
            )
            return {**denied.payload(), "source": "device_agent"}
        return None

    async def dry_run(self, step: PlanStep) -> dict[str, Any]:
        return await self.call(step.command, **step.args, dry_run=True)

    def _audit(
        self, run_id: str, tool: str, args: dict[str, Any], before: Any, obs: Observation
    ) -> None:
        if self.audit is None:
            return
        self.audit.append(
            run_id=run_id,
            agent=f"device:{self.instrument}",
            tool=tool,
            args=args,
            state_before=before,
            state_after=obs.state or None,
            decision_note="replayed recorded outcome" if obs.replayed else "",
            result={"ok": obs.ok, "error": obs.error, "transport_error": obs.transport_error},
        )

    async def drop_used_tips(
        self, run_id: str, step: PlanStep, attempt: int, reason: str
    ) -> list[str]:
        """Drop the tips left on channels into the trash, then read back; audited with
        ``reason``. The action id ``make-safe#<attempt>`` names the attempt it follows: one
        drop after each failed attempt at most (asked again, it is the recorded outcome)."""
        done: list[str] = []
        try:
            state = await self.state()
            if any(c.get("tip") for c in state.get("channels", [])):
                args = {"dry_run": False, "action_id": f"{run_id}/{step.id}/make-safe#{attempt}"}
                result = await self.call("drop_tips", **args)
                outcome = {"ok": bool(result.get("ok")), "error": result.get("error")}
                self.decide(run_id, reason, "drop_tips", outcome, **args)
                done.append("dropped the tips")
            await self.read_back(run_id, reason)
            done.append("read back")
        except TRANSPORT_ERRORS:
            done.append("could not reach the instrument")
        return done

    async def execute(
        self,
        step: PlanStep,
        run_id: str,
        attempt: int = 1,
        resume: dict[str, Any] | None = None,
    ) -> Observation:
        """Carry out one step (at most once per action id) and recover locally within the
        rules; ``resume`` continues a step a person said to retry, with only what is left."""
        if resume is not None:
            obs = await recovery.continue_step(self, step, run_id, attempt, resume)
        else:
            obs = await self.act(step, run_id, action_id_for(run_id, step, attempt), step.args)
            obs.attempt = attempt
        return await recovery.recover_locally(self, step, run_id, obs, resume)

    async def act(
        self, step: PlanStep, run_id: str, action_id: str, step_args: dict[str, Any]
    ) -> Observation:
        """Send one action of a step (its policy checked first) and observe the result."""
        base: dict[str, Any] = {
            "step_id": step.id,
            "instrument": self.instrument,
            "command": step.command,
            "action_id": action_id,
            "args": dict(step_args),
        }
        args = {**step_args, "dry_run": False, "action_id": action_id}
        denied = self.check_policy(step.model_copy(update={"args": dict(step_args)}))
        if denied is not None:
            obs = Observation(**base, ok=False, error=denied)
            self._audit(run_id, step.command, args, None, obs)
            return obs
        before: Any = None
        try:
            if self.audit is not None:
                # The state this agent last read of its instrument (after its previous action
                # or read back); only this agent acts on it, so it is the state before.
                before = self._last_state if self._last_state is not None else await self.state()
            payload = await self.call(step.command, **args)
            refused = ErrorInfo.of(payload)
            if refused is not None and refused.code is Code.STATE_STALE:
                # The server refused before acting (it restarted, or lost track of the
                # instrument): re-read the instrument, then ask again with the same action id.
                await self.read_back(run_id, "the instrument's state was stale")
                payload = await self.call(step.command, **args)
            state = await self.state()
        except TRANSPORT_ERRORS as exc:
            obs = Observation(**base, ok=False, transport_error=f"{type(exc).__name__}: {exc}")
            self._audit(run_id, step.command, args, before, obs)
            return obs
        if not payload.get("ok"):
            error = dict(payload.get("error") or {})
            extra = dict(error.get("extra") or {})
            if "progress" in extra:  # kept once, as the observation's own field
                error["extra"] = {k: v for k, v in extra.items() if k != "progress"}
            obs = Observation(
                **base,
                ok=False,
                error=error,
                state=state,
                deviations=list(extra.get("deviations", [])),
                operations=extra.get("progress"),
                in_doubt=bool(extra.get("in_doubt", False)),
            )
            self._audit(run_id, step.command, args, before, obs)
            return obs
        obs = Observation(
            **base,
            ok=True,
            simulated=bool(payload.get("simulated", True)),
            replayed=bool(payload.get("replayed", False)),
            state=state,
            deviations=list(payload.get("deviations", [])),
            measurements=list(payload.get("measurements", [])),
            events=list(payload.get("events", [])),
            operations=payload.get("progress"),
        )
        self._audit(run_id, step.command, args, before, obs)
        return obs
