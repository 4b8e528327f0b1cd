"""Wire models shared by device servers and their clients (pure pydantic, no server code).

An agent may import this module; it must never import the rest of ``device_servers``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# --------------------------------------------------------------------------- configuration


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class BackendSpec(_Strict):
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


class CarrierSpec(_Strict):
    """A carrier on the deck: a PyLabRobot resource factory name placed at a rail."""

    id: str
    type: str
    rails: int = Field(ge=1, le=60)


class LabwareSpec(_Strict):
    """A labware item: a PyLabRobot resource factory name in a carrier slot."""

    id: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    type: str
    carrier: str
    slot: int = Field(ge=0, le=10)


class LiquidSpec(_Strict):
    """Initial liquid: ``volume_ul`` of ``liquid`` in each well of ``wells`` ("A1", "A1:H1")."""

    labware: str
    wells: str
    liquid: str = Field(min_length=1, max_length=64)
    volume_ul: float = Field(gt=0)


class PolicySpec(_Strict):
    """Per-instrument policy: the default rules file for its kind, plus overrides."""

    rules_file: str | None = None
    rules: list[dict[str, Any]] = Field(default_factory=list)
    protected_labware: list[str] = Field(default_factory=list)


class FaultSpec(_Strict):
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


class InstrumentBase(_Strict):
    """What every instrument's configuration has."""

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


class LiquidHandlerConfig(InstrumentBase):
    """A liquid handler: a PyLabRobot deck with carriers, labware and initial liquids."""

    kind: Literal["liquid_handler"]
    deck: str = "STARLetDeck"
    num_channels: int = Field(default=8, ge=1, le=16)
    carriers: list[CarrierSpec] = Field(default_factory=list)
    labware: list[LabwareSpec] = Field(default_factory=list)
    liquids: list[LiquidSpec] = Field(default_factory=list)


class PlateReaderConfig(InstrumentBase):
    """A plate reader (PyLabRobot ``PlateReader``) with one drawer at location ``<id>:drawer``.

    The simulated backend computes readings from what is really in the wells of the plate in
    its drawer: ``blank`` plus, per liquid, its signal per unit of volume fraction, plus noise
    from a seeded generator. Results always say ``simulated: true``.
    """

    kind: Literal["plate_reader"]
    wavelength_range_nm: tuple[int, int] = (230, 1000)
    absorbance_blank: float = Field(default=0.045, ge=0)
    absorbance_per_fraction: dict[str, float] = Field(default_factory=lambda: {"dye": 2.0})
    fluorescence_per_fraction: dict[str, float] = Field(default_factory=dict)
    luminescence_per_fraction: dict[str, float] = Field(default_factory=dict)
    noise_sd: float = Field(default=0.002, ge=0)
    seed: int = 0
    plate_types: dict[str, str] = Field(
        default_factory=dict, description="Plate id -> PyLabRobot resource name (from the lab)."
    )


class HeaterShakerConfig(InstrumentBase):
    """A heater-shaker (PyLabRobot ``HeaterShaker``) holding one plate at ``<id>:holder``.

    ``time_scale`` is simulated seconds per real second: with 60, a one-minute shake or ramp
    takes one real second in the simulated backend.
    """

    kind: Literal["heater_shaker"]
    temperature_range_c: tuple[float, float] = (4.0, 100.0)
    rpm_range: tuple[int, int] = (200, 3000)
    ramp_c_per_min: float = Field(default=10.0, gt=0)
    ambient_c: float = 22.0
    time_scale: float = Field(default=1.0, gt=0, le=1_000_000)
    plate_types: dict[str, str] = Field(default_factory=dict)


class PlateMoverConfig(InstrumentBase):
    """A robotic arm moving plates between named locations (its workspace).

    Locations are ``<owner>:<place>``: ``lh1:plate_carrier:1`` (a liquid-handler deck slot),
    ``reader1:drawer``, ``hs1:holder``, ``hotel:1``. ``initial_locations`` is filled by the lab
    for plates that start on a liquid-handler deck.
    """

    kind: Literal["plate_mover"]
    locations: list[str] = Field(min_length=1)
    plates: list[str] = Field(default_factory=list)
    initial_locations: dict[str, str] = Field(default_factory=dict)
    move_seconds: float = Field(default=8.0, gt=0)
    time_scale: float = Field(default=1.0, gt=0, le=1_000_000)
    plate_types: dict[str, str] = Field(default_factory=dict)


InstrumentConfig = Annotated[
    LiquidHandlerConfig | PlateReaderConfig | HeaterShakerConfig | PlateMoverConfig,
    Field(discriminator="kind"),
]


def deck_location(instrument: str, carrier: str, slot: int) -> str:
    """The lab-wide name of a liquid-handler deck slot."""
    return f"{instrument}:{carrier}:{slot}"


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


class ProtocolStep(_Strict):
    """One step of a protocol: a command name and its arguments."""

    command: str
    args: dict[str, Any] = Field(default_factory=dict)


class Protocol(_Strict):
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
