"""A device agent: one instrument, one persistent MCP session, that instrument's rules.

The task agent hands it one plan step at a time; it never sees device tools itself. The device
agent checks its instrument's policy first, calls the tool with a deterministic ``action_id``
(so a step re-run after a crash asks the same question and gets the recorded answer), reads
the state back after acting and returns a structured :class:`Observation`.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp import ClientSession
from mcp.shared.exceptions import McpError
from pydantic import BaseModel, Field

from agents.task.planning.models import PlanStep
from device_servers.contract import Code, ErrorInfo
from policies import PolicyEngine, PolicyRequest, Verdict
from state_store import AuditLog

# Failures of the pipe, not of the instrument: the only ones retried automatically.
TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (
    McpError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    ConnectionError,
    TimeoutError,
    OSError,
)


def action_id_for(run_id: str, step: PlanStep, attempt: int = 1) -> str:
    """Deterministic: the same (run, step, operation, attempt) always yields the same id.

    A new attempt (after a device error and a fresh read back) is a new action; asking again
    within one attempt (a node re-run after a crash) is the same action.
    """
    base = f"{run_id}/{step.id}/{step.command}"
    return base if attempt <= 1 else f"{base}#{attempt}"


class Observation(BaseModel):
    """What happened when a step was dispatched, as the instrument reported it."""

    step_id: str
    instrument: str
    command: str
    action_id: str
    ok: bool
    simulated: bool = True
    replayed: bool = False
    error: dict[str, Any] | None = None
    transport_error: str | None = None
    state: dict[str, Any] = Field(default_factory=dict)
    deviations: list[dict[str, Any]] = Field(default_factory=list)
    measurements: list[dict[str, Any]] = Field(default_factory=list)
    events: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def code(self) -> Code | None:
        """The instrument's error code (None: no error; a transport failure has none)."""
        info = self.error_info
        return None if info is None else info.code

    @property
    def error_info(self) -> ErrorInfo | None:
        """The error as the typed wire model."""
        return None if self.error is None else ErrorInfo.of({"ok": False, "error": self.error})


def structured(result: Any) -> dict[str, Any]:
    """The structured payload of an MCP tool result (text JSON as a fallback)."""
    if result.structuredContent is not None:
        return dict(result.structuredContent)
    for block in result.content:
        text = getattr(block, "text", None)
        if text:
            return dict(json.loads(text))
    error = ErrorInfo(code=Code.ADAPTER_FAULT, detail="empty tool result")
    return {"ok": False, "error": error.payload()}


class DeviceAgent:
    """Bound to ONE instrument's MCP session and policy."""

    def __init__(
        self,
        instrument: str,
        kind: str,
        session: ClientSession,
        policy: PolicyEngine | None = None,
        call_timeout_s: float = 600.0,
        audit: AuditLog | None = None,
    ) -> None:
        self.instrument = instrument
        self.kind = kind
        self.session = session
        self.policy = policy
        self.call_timeout_s = call_timeout_s
        self.audit = audit
        self._last_state: dict[str, Any] | None = None

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
        """The instrument's rules, checked before calling; an error payload when denied."""
        if self.policy is None:
            return None
        decision = self.policy.evaluate(
            PolicyRequest(
                instrument=self.instrument,
                command=step.command,
                numbers={
                    k: [float(v)]
                    for k, v in step.args.items()
                    if isinstance(v, int | float) and not isinstance(v, bool)
                },
                args=dict(step.args),
                dry_run=False,
                facts_known=False,
            )
        )
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

    async def make_safe(self, run_id: str, step: PlanStep, attempt: int) -> list[str]:
        """After a device error: put the instrument in a safe state, read it back."""
        done: list[str] = []
        try:
            state = await self.state()
            if self.kind == "liquid_handler" and any(
                c.get("tip") for c in state.get("channels", [])
            ):
                args = {"dry_run": False, "action_id": f"{run_id}/{step.id}/make-safe#{attempt}"}
                result = await self.call("drop_tips", **args)
                if self.audit is not None:
                    self.audit.append(
                        run_id=run_id,
                        agent=f"device:{self.instrument}",
                        tool="drop_tips",
                        args=args,
                        decision_note="make safe after a device error",
                        result={"ok": bool(result.get("ok")), "error": result.get("error")},
                    )
                done.append("dropped the tips")
            await self.read_back(run_id, "make safe after a device error")
            done.append("read back")
        except TRANSPORT_ERRORS:
            done.append("could not reach the instrument")
        return done

    async def execute(self, step: PlanStep, run_id: str, attempt: int = 1) -> Observation:
        """Dispatch one step at most once (by its action_id) and observe the result."""
        action_id = action_id_for(run_id, step, attempt)
        base: dict[str, Any] = {
            "step_id": step.id,
            "instrument": self.instrument,
            "command": step.command,
            "action_id": action_id,
        }
        args = {**step.args, "dry_run": False, "action_id": action_id}
        denied = self.check_policy(step)
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
            deviations = list((error.get("extra") or {}).get("deviations", []))
            obs = Observation(**base, ok=False, error=error, state=state, deviations=deviations)
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
        )
        self._audit(run_id, step.command, args, before, obs)
        return obs
