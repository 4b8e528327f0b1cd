"""Wire models shared by device servers and their clients (pure pydantic, no server code).

Configuration every instrument has (:class:`InstrumentBase`; each kind's own lives in its
folder), the error codes (:class:`Code`), the tools every server has (:data:`COMMON_TOOLS`)
and what servers send: :class:`ErrorInfo`, :class:`CommandResult`, :class:`RunInfo`,
:class:`Event`. An agent may import this module; it must never import the rest of
``device_servers``.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
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

    def stations(self) -> list[Station]:
        """The places this instrument offers plates, and what must hold to use them."""
        return []

    def station(self, place: str, *requires: Requirement, **fields: Any) -> Station:
        """A station of this instrument at ``<id>:<place>``."""
        return Station(place=f"{self.id}:{place}", instrument=self.id, requires=requires, **fields)

    def wired(self, lab: LabFacts) -> InstrumentBase:
        """This configuration completed with what the lab knows (plate types by default)."""
        if "plate_types" in type(self).model_fields:
            types = {**lab.plate_types, **getattr(self, "plate_types", {})}
            return self.model_copy(update={"plate_types": types})
        return self


class Requirement(Strict):
    """A fact of an instrument that must hold for a plate to enter or leave one of its places.

    ``made_by``: the instrument's command that makes it hold (``open_drawer``);
    ``undone_by``: the one that makes it no longer hold (``close_drawer``); ``default``: the
    value when the instrument does not report the fact at all (``busy`` is reported only
    while it acts), else an unreported fact is unknown and the place not ready.
    """

    fact: str
    equals: bool = True
    made_by: str | None = None
    undone_by: str | None = None
    default: bool | None = None


class Station(Strict):
    """How a plate reaches an instrument: a place it offers and what must hold to use it.

    ``place``: the lab-wide name (``reader1:drawer``; ``lh1:plate_carrier:*`` covers every
    slot of a carrier); ``role``: ``load`` (a plate is put here
    to be processed), ``home`` (a deck slot a labware lives at) or ``shelf`` (storage);
    ``requires``: facts that must hold for a plate to enter or leave; ``after_enter`` /
    ``after_leave``: the instrument's command that secures it once a plate has arrived / left
    (``close_drawer``), with ``plate_arg`` naming the arrived plate in its arguments;
    ``plate_fact``: the fact that names the plate it holds (``plate_in_reader``).
    """

    place: str
    instrument: str
    role: Literal["load", "home", "shelf"] = "load"
    requires: tuple[Requirement, ...] = ()
    after_enter: str | None = None
    plate_arg: str | None = None
    after_leave: str | None = None
    plate_fact: str | None = None


def find_station(stations: Iterable[Station], place: str) -> Station | None:
    """The station describing ``place``: by its name, or one ending in ``:*`` that covers it
    (every slot of a carrier, ``lh1:plate_carrier:*``)."""
    found = None
    for station in stations:
        if station.place == place:
            return station
        if station.place.endswith(":*") and place.startswith(station.place[:-1]):
            found = found or station
    return found


def station_ready(station: Station | None, facts: dict[str, Any] | None) -> bool | None:
    """Whether a plate may enter or leave ``station`` given its instrument's ``facts``.

    False for a place no instrument describes (an unknown place is never ready) or a fact
    that does not hold; None when a fact it needs is unknown (counts as not ready too).
    """
    if station is None:
        return False
    if not station.requires:
        return True
    if facts is None:
        return None
    unknown = False
    for req in station.requires:
        value = facts.get(req.fact, req.default)
        if value is None:
            unknown = True
        elif bool(value) != req.equals:
            return False
    return None if unknown else True


def after_command(stations: list[Station], command: str, facts: dict[str, Any]) -> None:
    """How an instrument's command changes the facts its stations need (simulations)."""
    for station in stations:
        for req in station.requires:
            if command == req.made_by:
                facts[req.fact] = req.equals
            elif command == req.undone_by:
                facts[req.fact] = not req.equals


class PlateTypes(Strict):
    """An instrument that plates come to: it knows their PyLabRobot types from the lab."""

    plate_types: dict[str, str] = Field(
        default_factory=dict, description="Plate id -> PyLabRobot resource name (from the lab)."
    )


class Timed(Strict):
    """An instrument whose simulated backend may run faster than the wall clock."""

    time_scale: float = Field(
        default=1.0, gt=0, le=1_000_000, description="Simulated seconds per real second."
    )


class Heated(Timed):
    """An instrument with a heater that drifts back to the room's temperature when off."""

    ambient_c: float = 22.0


class LabFacts(Strict):
    """What the lab file tells each instrument about the others (see ``InstrumentBase.wired``).

    ``plate_types``: plate id -> PyLabRobot type; ``starts``: plate id -> where it starts;
    ``owners``: every instrument id, plus places every lab has (``hotel``); ``stations``:
    every place an instrument offers, by place.
    """

    plate_types: dict[str, str] = Field(default_factory=dict)
    starts: dict[str, str] = Field(default_factory=dict)
    owners: frozenset[str] = frozenset()
    stations: dict[str, Station] = Field(default_factory=dict)


def location_owner(location: str) -> str:
    """``reader1:drawer`` -> ``reader1``; ``hotel:3`` -> ``hotel``."""
    return location.split(":", 1)[0]


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
