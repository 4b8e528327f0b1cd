"""Heater-shaker commands as frozen, typed records, and the primitives they expand to.

Temperatures are in degrees Celsius, speeds in revolutions per minute, durations in seconds of
instrument time (a simulated instrument may run faster than the wall clock: ``time_scale``).
Every command is one primitive: the instrument has one block and one plate holder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import Field

from device_servers.kind import DeviceCommand, command_table


class HSCommand(DeviceCommand):
    """Base of the heater-shaker commands."""


class SetTemperature(HSCommand):
    """Set the block's target temperature in degrees Celsius and return at once: the block then
    ramps (about 10 C per minute) on its own; call wait_for_temperature to block until it is
    there. The physical range is the instrument's temperature_range_c (default 4 to 100 C;
    outside it: OUT_OF_RANGE); the lab's policy denies high temperatures (POLICY_DENIED, default
    above 80 C) and asks a person to approve warm ones (APPROVAL_REQUIRED, default above 60 C).
    Needs no plate.
    """

    name: ClassVar[str] = "set_temperature"
    celsius: float = Field(description="Target block temperature in degrees Celsius.")


class WaitForTemperature(HSCommand):
    """Block until the block temperature is within tolerance_c of the target set by
    set_temperature, then report a temperature_reached event {target_c, current_c}. Needs a
    target (else PRECONDITION_FAILED: call set_temperature first). If the block is not there
    within timeout_s seconds the call fails with HARDWARE_TIMEOUT (undefined: the twin becomes
    STATE_STALE until read_back). Long waits are best run inside start_run and followed with
    run_events.
    """

    name: ClassVar[str] = "wait_for_temperature"
    tolerance_c: float = Field(default=0.5, gt=0, le=10, description="Degrees Celsius.")
    timeout_s: float = Field(
        default=1800, gt=0, le=86_400, description="Seconds of instrument time to wait at most."
    )


class Shake(HSCommand):
    """Shake the plate at rpm revolutions per minute for duration_s seconds, then stop; the call
    blocks until the shake is over (run it inside start_run for long shakes). Needs a plate on
    the holder (else PRECONDITION_FAILED: read_back if one was placed since) and the plate
    locked (the policy denies shaking an unlocked plate: POLICY_DENIED; call lock_plate first).
    rpm outside the instrument's rpm_range (default 200 to 3000) is OUT_OF_RANGE; the lab's
    policy may cap it lower (POLICY_DENIED).
    """

    name: ClassVar[str] = "shake"
    rpm: int = Field(description="Shaking speed in revolutions per minute.")
    duration_s: float = Field(gt=0, le=86_400, description="Seconds of shaking.")


class Hold(HSCommand):
    name: ClassVar[str] = "hold"
    summary: ClassVar[str] = (
        "Keep the plate on the holder for duration_s seconds without shaking: an incubation at "
        "the block's current target (set_temperature and wait_for_temperature first to "
        "incubate warm; with no target the block is at ambient). Blocks until the time is up "
        "(run it inside start_run for long holds). Needs a plate on the holder (else "
        "PRECONDITION_FAILED). The plate need not be locked."
    )
    duration_s: float = Field(gt=0, le=86_400, description="Seconds of holding.")


class Stop(HSCommand):
    """Stop shaking and switch the heater off (deactivate: the block drifts back to ambient and the
    target is cleared). Safe at any time; leaves the plate lock as it is.
    """

    name: ClassVar[str] = "stop"


class LockPlate(HSCommand):
    """Clamp the plate on the holder so it can be shaken. Needs a plate on the holder (else
    PRECONDITION_FAILED: put one there, then read_back so the twin sees it).
    """

    name: ClassVar[str] = "lock_plate"


class UnlockPlate(HSCommand):
    """Release the plate clamp so the plate can be taken away. Refused while shaking
    (PRECONDITION_FAILED: call stop first).
    """

    name: ClassVar[str] = "unlock_plate"


COMMANDS = command_table(
    SetTemperature, WaitForTemperature, Shake, Hold, Stop, LockPlate, UnlockPlate
)

Op = Literal["set_temperature", "wait_for_temperature", "shake", "hold", "stop", "lock", "unlock"]


@dataclass(frozen=True, slots=True)
class Primitive:
    """One action of the instrument; unused fields stay ``None``."""

    op: Op
    celsius: float | None = None
    tolerance_c: float | None = None
    timeout_s: float | None = None
    rpm: int | None = None
    duration_s: float | None = None
