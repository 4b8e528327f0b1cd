"""What a planner reads (a view of the lab) and what it answers (a plan, a question, a refusal).

Every planner — the embedded rule planner and the LLM planner — speaks these types, so the
rest of the task agent does not care which one produced a plan.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from device_servers.contract import Station


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlanStep(_Model):
    """One device command: which instrument, which command, its arguments, what it should do."""

    id: str = Field(description="Stable within the plan: s1, s2, ...")
    instrument: str
    command: str
    args: dict[str, Any] = Field(default_factory=dict)
    expect: dict[str, Any] = Field(
        default_factory=dict,
        description="Expected effect, e.g. {'wells': {'plate_1:A2': 100.0}} (uL) or "
        "{'plate_location': {'plate_1': 'reader1:drawer'}}.",
    )
    note: str = ""


TraceKind = Literal["action", "fact", "setting", "pleasantry", "not_done"]


class TraceItem(_Model):
    """How one clause of the request was understood, and the plan steps that carry it out."""

    clause: str = Field(description="The clause in the person's words.")
    kind: TraceKind = Field(
        default="action",
        description="An action needs steps; a fact checked against the lab, a setting for "
        "what follows, a pleasantry and work that is not the lab's (not_done: 'and tell me "
        "the doubling time', said in the plan so it is never dropped silently) need none.",
    )
    understood: str = Field(description="What it was read as, in plain words.")
    steps: list[str] = Field(
        default_factory=list, description="Plan step ids (empty for a fact that was checked)."
    )


class Plan(_Model):
    kind: Literal["plan"] = "plan"
    request: str
    summary: str
    steps: list[PlanStep] = Field(min_length=1)
    trace: list[TraceItem] = Field(
        default_factory=list, description="Understood as: each clause of the request -> steps."
    )
    tip_policy: str = Field(default="", description="Which tip use the plan follows, and why.")


class Clarification(_Model):
    """The request leaves something out that the lab state cannot give: ask, never guess."""

    kind: Literal["clarification"] = "clarification"
    request: str
    question: str
    missing: list[str] = Field(
        description="What is missing: volume, liquid, source, destination, wells, plate, "
        "temperature, duration, speed, wavelength, mode, count, fold, instrument, location, "
        "lab_state, action."
    )
    options: list[str] = Field(default_factory=list, description="Valid choices, if known.")


REFUSAL_CODES = (
    "capacity",
    "plate_size",
    "missing_instrument",
    "policy_limit",
    "tips",
    "not_a_lab_request",
    "nothing_to_do",
    "insufficient_liquid",
    "unsafe",
)


class Refusal(_Model):
    """The request asks for something impossible or unsafe (50 L, 500 C)."""

    kind: Literal["refusal"] = "refusal"
    request: str
    reason: str
    code: str = Field(
        default="",
        description="Why, as one word: capacity, plate_size, missing_instrument, policy_limit, "
        "tips, not_a_lab_request, nothing_to_do, insufficient_liquid, unsafe.",
    )


PlanResult = Annotated[Plan | Clarification | Refusal, Field(discriminator="kind")]


class WellView(_Model):
    volume_ul: float
    contents: dict[str, float] = Field(default_factory=dict)


class LabwareView(_Model):
    """A plate or tip rack as the planner sees it."""

    id: str
    kind: Literal["plate", "tip_rack"]
    type: str = Field(default="", description="Its labware type, e.g. a PyLabRobot name.")
    instrument: str = Field(description="The liquid handler whose deck defines it.")
    location: str = Field(description="Where it is now, e.g. lh1:plate_carrier:1 or hs1:holder.")
    home: str = Field(description="Its deck slot on the liquid handler.")
    rows: int
    cols: int
    well_max_volume_ul: float = 0.0
    wells: dict[str, WellView] = Field(default_factory=dict, description="Non-empty wells.")
    tips_remaining: int = 0
    tip_max_volume_ul: float = Field(
        default=0.0, description="For a tip rack: the most one of its tips holds (0: unknown)."
    )
    tip_spots: list[str] = Field(
        default_factory=list, description="For a tip rack: the spots that hold a tip, in order."
    )


class InstrumentView(_Model):
    id: str
    kind: str
    commands: list[str]
    location: str | None = Field(
        default=None, description="Where a plate goes to be used by it (reader1:drawer)."
    )
    limits: dict[str, Any] = Field(
        default_factory=dict,
        description="E.g. temperature range. The rule planner reads temperature_range_c, "
        "rpm_range and wavelength_range_nm as (low, high) pairs.",
    )
    policy: list[dict[str, Any]] = Field(
        default_factory=list, description="The instrument's policy rules, as lab://id/policy."
    )


class LabView(_Model):
    """The lab as a planner may know it: instruments, labware with contents, locations."""

    instruments: dict[str, InstrumentView]
    labware: dict[str, LabwareView]
    mover_locations: list[str] = Field(default_factory=list)
    stations: dict[str, Station] = Field(
        default_factory=dict,
        description="How a plate reaches each place, as its instrument publishes it (get_state).",
    )

    def liquids(self) -> dict[str, list[tuple[str, str, float]]]:
        """Liquid name -> [(labware, well, uL)] where it is found, fullest first."""
        found: dict[str, list[tuple[str, str, float]]] = {}
        for lw in self.labware.values():
            for name, well in lw.wells.items():
                for liquid, vol in well.contents.items():
                    found.setdefault(liquid, []).append((lw.id, name, vol))
        for places in found.values():
            places.sort(key=lambda p: -p[2])
        return found

    def of_kind(self, kind: str) -> list[InstrumentView]:
        return [i for i in self.instruments.values() if i.kind == kind]


class Planner(Protocol):
    """Turns a request into a plan, a clarification or a refusal."""

    def plan(self, request: str, lab: LabView) -> Plan | Clarification | Refusal: ...
