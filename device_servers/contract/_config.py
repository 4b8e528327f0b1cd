"""Configuration every instrument has; each kind's own fields live in its folder."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from device_servers.contract._stations import LabFacts

# --------------------------------------------------------------------------- configuration


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


BACKEND_PACKAGES = ("pylabrobot",)
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$")


class BackendSpec(Strict):
    """Which backend drives an instrument.

    ``simulated`` (default) acts on the lab's simulated world. ``pylabrobot`` constructs a
    PyLabRobot hardware backend from ``class_path`` and ``args``, only when configured.
    ``class_path`` must name a class in PyLabRobot or in one of ``allowed_packages`` (your own
    backends): it is checked as text before anything is imported, so a lab file cannot make a
    server run the top-level code of an arbitrary module.
    """

    type: Literal["simulated", "pylabrobot"] = "simulated"
    class_path: str | None = None
    args: dict[str, Any] = Field(default_factory=dict)
    allowed_packages: list[str] = Field(
        default_factory=list,
        description="Packages besides pylabrobot whose backend classes class_path may name.",
    )

    @model_validator(mode="after")
    def _allowed(self) -> BackendSpec:
        path = self.class_path
        if path is None:
            if self.type == "pylabrobot":
                raise ValueError("class_path: a pylabrobot backend needs class_path")
            return self
        if not _DOTTED.match(path):
            raise ValueError("class_path must be a dotted path such as 'package.module.Class'")
        for package in self.allowed_packages:
            if not _DOTTED.match(package + ".x"):
                raise ValueError(f"allowed_packages: {package!r} is not a package name")
        packages = (*BACKEND_PACKAGES, *self.allowed_packages)
        if not any(path.startswith(p + ".") for p in packages):
            raise ValueError(
                f"class_path: {path} is not in an allowed package ({', '.join(packages)}); "
                "add your own package to backend.allowed_packages"
            )
        return self


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


class InstrumentBase(Strict):
    """What every instrument's configuration has (each kind adds its own fields)."""

    kind: str
    id: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    backend: BackendSpec = Field(default_factory=BackendSpec)
    allow_execution: bool | None = None
    command_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="How long one operation may take (wall time). On a simulated backend it "
        "counts the instrument's own waits (travel, holds, a hang), never the host's speed.",
    )
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


def location_owner(location: str) -> str:
    """``reader1:drawer`` -> ``reader1``; ``hotel:3`` -> ``hotel``."""
    return location.split(":", 1)[0]
