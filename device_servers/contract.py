"""Wire models shared by device servers and their clients (pure pydantic, no server code).

An agent may import this module; it must never import the rest of ``device_servers``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# --------------------------------------------------------------------------- configuration


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BackendSpec(Strict):
    """Which backend drives an instrument.

    ``simulated`` (default) acts on the lab's simulated world. ``pylabrobot`` constructs a
    PyLabRobot hardware backend from ``class_path`` and ``args``, only when configured.
    """

    type: Literal["simulated", "pylabrobot"] = "simulated"
    class_path: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)

    @field_validator("class_path")
    @classmethod
    def _dotted(cls, value: str | None) -> str | None:
        if value is not None and ("." not in value or value.startswith(".")):
            raise ValueError("class_path must be a dotted path such as 'package.module.Class'")
        return value


class PolicySpec(Strict):
    """Per-instrument policy: the default rules file for its kind, plus overrides."""

    rules_file: str | None = None
    rules: list[dict[str, Any]] = Field(default_factory=list)
    protected_labware: list[str] = Field(default_factory=list)


class FaultSpec(Strict):
    """A fault the simulated world injects (never the twin). See ``device_servers.sim.faults``."""

    kind: Literal[
        "tip_pickup_fail",
        "less_liquid",
        "hang",
        "disconnect",
        "crash",
        "adapter_fault",
        "delay",
        "nan_reading",
        "empty_grasp",
        "temperature_never_reached",
    ]
    at_op: int | None = Field(default=None, ge=1)
    match: dict[str, str] = Field(default_factory=dict)
    times: int = Field(default=1, ge=-1)
    params: dict[str, Any] = Field(default_factory=dict)


class InstrumentBase(Strict):
    """What every instrument's configuration has (each kind adds its own fields)."""

    kind: str
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    backend: BackendSpec = Field(default_factory=BackendSpec)
    allow_execution: bool | None = None
    command_timeout_s: float = Field(default=30.0, gt=0, le=3600)
    policy: PolicySpec = Field(default_factory=PolicySpec)
    faults: list[FaultSpec] = Field(default_factory=list)
    url: str | None = Field(
        default=None,
        description="A remote instrument's streamable-HTTP MCP endpoint; agents connect there "
        "instead of starting `labwright serve` over stdio.",
    )
    token_env: str | None = Field(
        default=None, description="Environment variable holding the bearer token for `url`."
    )

    @property
    def simulated(self) -> bool:
        return self.backend.type == "simulated"

    @property
    def execution_allowed(self) -> bool:
        """Execution is on by default for simulated backends and off for hardware."""
        if self.allow_execution is None:
            return self.simulated
        return self.allow_execution

    def plates_here(self) -> dict[str, tuple[str, str]]:
        """Plates that start on this instrument: plate id -> (PyLabRobot type, location)."""
        return {}

    def wired(self, lab: LabFacts) -> InstrumentBase:
        """This configuration completed with what the lab knows (plate types by default)."""
        if "plate_types" in type(self).model_fields:
            types = {**lab.plate_types, **getattr(self, "plate_types", {})}
            return self.model_copy(update={"plate_types": types})
        return self


class LabFacts(Strict):
    """What the lab file tells each instrument about the others (see ``InstrumentBase.wired``).

    ``plate_types``: plate id -> PyLabRobot type; ``starts``: plate id -> where it starts;
    ``owners``: every instrument id, plus places every lab has (``hotel``).
    """

    plate_types: dict[str, str] = Field(default_factory=dict)
    starts: dict[str, str] = Field(default_factory=dict)
    owners: frozenset[str] = frozenset()


def location_owner(location: str) -> str:
    """``reader1:drawer`` -> ``reader1``; ``hotel:3`` -> ``hotel``."""
    return location.split(":", 1)[0]


# --------------------------------------------------------------------------- wire payloads


class ErrorInfo(BaseModel):
    """The ``error`` of a failed call."""

    code: str
    detail: str
    retriable: bool
    fix_hint: str
    defined: bool
    action_id: str | None = None
    extra: dict[str, Any] | None = None


class CommandResult(BaseModel):
    """A successful command: ``{ok, simulated, dry_run, action_id, state, ...}``."""

    ok: Literal[True] = True
    simulated: bool
    dry_run: bool
    action_id: str | None
    state: dict[str, Any]
    events: list[dict[str, Any]] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    replayed: bool = False


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
    """One entry of a run's append-only event log."""

    seq: int
    run_id: str
    type: str
    ts: float
    simulated: bool
    data: dict[str, Any] = Field(default_factory=dict)
