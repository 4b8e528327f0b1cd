"""Thermocycler commands as frozen, typed records, and the primitives they expand to.

Temperatures are in degrees Celsius, hold times in seconds of instrument time (a simulated
instrument may run faster than the wall clock: ``time_scale``). A profile is stages of steps
(a temperature held for a time), each stage repeated; it runs one cycle per primitive, so a
run reports each cycle as it completes and a read back can tell how many cycles happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from device_servers.kind import DeviceCommand, command_table

# How fast a block moves between step temperatures, for the duration rules see (C/s).
RAMP_ESTIMATE_C_PER_S = 3.0


class TCCommand(DeviceCommand):
    """Base of the thermocycler commands."""


class OpenLid(TCCommand):
    """Open the lid so the plate mover can put a plate on the block or take it away. Refused
    while a profile runs (DEVICE_BUSY: cancel_run first)."""

    name: ClassVar[str] = "open_lid"


class CloseLid(TCCommand):
    """Close the lid over the block (and the plate on it). A profile runs only with the lid
    closed; no plate can be moved in or out while it is (the plate mover is refused)."""

    name: ClassVar[str] = "close_lid"


class SetBlockTemperature(TCCommand):
    """Set the block's target temperature in degrees Celsius (a hold, e.g. 4 C after a PCR
    profile) and return at once: the block ramps on its own. The physical range is the
    instrument's block_range_c (OUT_OF_RANGE beyond it); the lab's rules allow 4 to 99 C
    (POLICY_DENIED otherwise)."""

    name: ClassVar[str] = "set_block_temperature"
    celsius: float = Field(description="Block target in degrees Celsius.")


class SetLidTemperature(TCCommand):
    """Set the heated lid's target temperature in degrees Celsius (typically 105 C during a
    profile, so nothing condenses under it). The lab's rules allow at most 110 C
    (POLICY_DENIED)."""

    name: ClassVar[str] = "set_lid_temperature"
    celsius: float = Field(description="Lid target in degrees Celsius.")


class ProfileStep(BaseModel):
    """One step of a stage: hold the block at ``celsius`` for ``hold_s`` seconds."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    celsius: float = Field(description="Block temperature of the step, degrees Celsius.")
    hold_s: float = Field(gt=0, le=86_400, description="Seconds held at that temperature.")


class ProfileStage(BaseModel):
    """Steps run in order, the whole stage ``repeats`` times (35 PCR cycles: repeats=35)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    steps: list[ProfileStep] = Field(min_length=1, max_length=20)
    repeats: int = Field(default=1, ge=1, le=200)


class RunProfile(TCCommand):
    """Run a temperature profile on the block: stages of steps (temperature and hold time),
    each stage repeated `repeats` times, e.g. 95 C 180 s once, then 35 cycles of 95 C 15 s /
    60 C 30 s / 72 C 30 s. Run it inside start_run and follow run_events: a
    cycle_completed event {stage, cycle, of} comes after every cycle. lid_celsius (optional)
    heats the lid first. Needs the lid closed and a plate on the block (PRECONDITION_FAILED:
    close_lid, or read_back after the plate mover put one there). Every step temperature must
    be within the block's range (OUT_OF_RANGE) and the lab's 4 to 99 C (POLICY_DENIED); a
    profile longer than the lab's limit (default 2 hours) needs a person's approval
    (APPROVAL_REQUIRED). After the last cycle the block holds the last step's temperature;
    set_block_temperature sets a final hold."""

    name: ClassVar[str] = "run_profile"
    stages: list[ProfileStage] = Field(min_length=1, max_length=20)
    lid_celsius: float | None = Field(default=None, description="Heat the lid to this first.")

    def total_hold_s(self) -> float:
        return sum(st.repeats * sum(s.hold_s for s in st.steps) for st in self.stages)

    def policy_numbers(self) -> dict[str, list[float]]:
        """``duration_s``: the holds plus the ramps between steps, estimated."""
        temps = [s.celsius for st in self.stages for _ in range(st.repeats) for s in st.steps]
        ramps = sum(abs(b - a) for a, b in pairwise(temps))
        return {"duration_s": [self.total_hold_s() + ramps / RAMP_ESTIMATE_C_PER_S]}


class Stop(TCCommand):
    """Stop: switch the block and the lid heaters off (the block drifts to ambient). Safe at
    any time; leaves the lid as it is."""

    name: ClassVar[str] = "stop"


COMMANDS = command_table(
    OpenLid, CloseLid, SetBlockTemperature, SetLidTemperature, RunProfile, Stop
)

Op = Literal["open_lid", "close_lid", "set_block", "set_lid", "cycle", "stop"]


@dataclass(frozen=True, slots=True)
class Cycle:
    """One pass through a stage's steps: cycle ``number`` of ``of`` in stage ``stage``."""

    stage: int
    number: int
    of: int
    steps: tuple[tuple[float, float], ...]  # (C, seconds held)


@dataclass(frozen=True, slots=True)
class Primitive:
    """One action of the instrument: a lid, a heater target (``celsius``), or a ``cycle``."""

    op: Op
    celsius: float | None = None
    cycle: Cycle | None = None
