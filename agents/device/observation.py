"""What a device agent reports of one plan step: the wire-level facts, never prose.

An :class:`Observation` says what the instrument reported for the step's last action (its
state after, errors, deviations, readings) and which of its operations happened; action ids
are deterministic per (run, step, operation, attempt).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp.shared.exceptions import McpError
from pydantic import BaseModel, Field

from agents.task.planning.models import PlanStep
from device_servers.contract import Code, ErrorInfo

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
    # Which operations of the last action happened (the server's record, or its read back's).
    operations: dict[str, Any] | None = None
    in_doubt: bool = False
    attempt: int = 1
    args: dict[str, Any] = Field(default_factory=dict)
    # Destinations of the step served so far, over its actions (and those still to serve).
    served: list[str] = Field(default_factory=list)
    not_served: list[str] = Field(default_factory=list)
    # How a person's "retry" continues the step: complete this action under its own id, send
    # the remainder, or send it again (nothing happened); None: nothing can be sent safely.
    resume: dict[str, Any] | None = None
    decisions: list[str] = Field(default_factory=list)

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
