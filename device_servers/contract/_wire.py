"""What servers send and agents read: error codes, errors, results, runs, events."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from device_servers.contract._config import Strict

# --------------------------------------------------------------------------- wire payloads


class Code(StrEnum):
    """Stable error codes (see DESIGN.md section 3)."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    UNKNOWN_LABWARE = "UNKNOWN_LABWARE"
    UNKNOWN_WELL = "UNKNOWN_WELL"
    INSUFFICIENT_VOLUME = "INSUFFICIENT_VOLUME"
    WELL_OVERFLOW = "WELL_OVERFLOW"
    NO_TIP = "NO_TIP"
    TIP_ALREADY_ATTACHED = "TIP_ALREADY_ATTACHED"
    TIPRACK_EMPTY = "TIPRACK_EMPTY"
    VOLUME_EXCEEDS_TIP = "VOLUME_EXCEEDS_TIP"
    OUT_OF_RANGE = "OUT_OF_RANGE"
    POLICY_DENIED = "POLICY_DENIED"
    APPROVAL_REQUIRED = "APPROVAL_REQUIRED"
    REAL_EXECUTION_DISABLED = "REAL_EXECUTION_DISABLED"
    DEVICE_BUSY = "DEVICE_BUSY"
    ESTOP_ACTIVE = "ESTOP_ACTIVE"
    STATE_STALE = "STATE_STALE"
    HARDWARE_TIMEOUT = "HARDWARE_TIMEOUT"
    DECK_COLLISION = "DECK_COLLISION"
    SENSOR_INVALID = "SENSOR_INVALID"
    GRIP_FAILED = "GRIP_FAILED"
    CONNECTION_LOST = "CONNECTION_LOST"
    ADAPTER_FAULT = "ADAPTER_FAULT"
    ACTION_IN_DOUBT = "ACTION_IN_DOUBT"
    ACTION_ID_REUSED = "ACTION_ID_REUSED"
    RUN_NOT_FOUND = "RUN_NOT_FOUND"
    PRECONDITION_FAILED = "PRECONDITION_FAILED"
    OPERATION_ABORTED = "OPERATION_ABORTED"


# The tools every instrument server has, besides its kind's own commands.
COMMON_TOOLS = (
    "get_state",
    "read_back",
    "start_run",
    "run_events",
    "get_run",
    "cancel_run",
    "emergency_stop",
    "confirm_state",
    "reset_estop",
)


class ErrorInfo(BaseModel):
    """The ``error`` of a failed call: ``{code, detail, retriable, fix_hint, defined, action_id}``.

    ``defined``: the system knows how to recover (no tip, too little liquid); an undefined
    error stops the instrument and goes to a person. ``retriable``: re-sending the very same
    request cannot cause a second physical action.
    """

    model_config = ConfigDict(extra="allow")

    code: Code
    detail: str = ""
    retriable: bool = False
    fix_hint: str = ""
    defined: bool = False
    action_id: str | None = None
    extra: dict[str, Any] | None = None

    def payload(self) -> dict[str, Any]:
        """The JSON a server sends (``extra`` only when there is some)."""
        out = self.model_dump(mode="json", exclude_none=False)
        if out.get("extra") is None:
            out.pop("extra", None)
        return out

    @classmethod
    def of(cls, result: dict[str, Any]) -> ErrorInfo | None:
        """The error of a tool result, or None when the call succeeded."""
        if result.get("ok", False):
            return None
        error = result.get("error")
        if not isinstance(error, dict):
            return cls(code=Code.ADAPTER_FAULT, detail="a failed call without an error")
        try:
            return cls.model_validate(error)
        except ValueError:
            return cls(code=Code.ADAPTER_FAULT, detail=f"an unreadable error: {error!r}"[:300])


class CommandResult(BaseModel):
    """A successful command: ``{ok, simulated, dry_run, action_id, state, ...}``.

    A dry run adds ``operations``, ``args_hash`` (what a person's approval binds to) and
    ``needs_approval``; an executed command adds ``deviations`` and, for readings,
    ``measurements``; a repeated action id is answered with the recorded result and
    ``replayed: true``.
    """

    model_config = ConfigDict(extra="allow")

    ok: Literal[True] = True
    simulated: bool
    dry_run: bool
    action_id: str | None
    state: dict[str, Any]
    events: list[dict[str, Any]] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    replayed: bool = False
    deviations: list[dict[str, Any]] = Field(default_factory=list)
    measurements: list[dict[str, Any]] = Field(default_factory=list)
    operations: int | None = None
    args_hash: str | None = None
    needs_approval: bool = False


class ProtocolStep(Strict):
    """One step of a protocol: a command name and its arguments."""

    command: str
    args: dict[str, Any] = Field(default_factory=dict)


class Protocol(Strict):
    """A named list of commands for one instrument."""

    name: str = "protocol"
    instrument: str | None = None
    steps: list[ProtocolStep] = Field(min_length=1, max_length=10_000)


RunStatus = Literal["pending", "running", "completed", "failed", "cancelled", "interrupted"]

EVENT_TYPES = (
    "step_started",
    "step_completed",
    "liquid_transferred",
    "tip_picked_up",
    "tip_dropped",
    "plate_moved",
    "reading_taken",
    "temperature_reached",
    "warning",
    "error",
    "deviation",
    "run_cancelled",
    "estop",
    "estop_reset",
    "protocol_completed",
)


class RunInfo(BaseModel):
    """A run as ``get_run`` reports it."""

    run_id: str
    instrument: str
    status: RunStatus
    simulated: bool
    dry_run: bool
    run_key: str | None = None
    protocol_name: str
    steps_total: int
    steps_done: int
    error: dict[str, Any] | None = None
    created_at: float
    updated_at: float


class Event(BaseModel):
    """One entry of a run's append-only event log (``type``: one of :data:`EVENT_TYPES` or an
    instrument's own, such as ``temperature_set``)."""

    seq: int
    run_id: str
    type: str
    ts: float
    simulated: bool
    data: dict[str, Any] = Field(default_factory=dict)
