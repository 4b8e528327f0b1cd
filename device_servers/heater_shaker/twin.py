"""The heater-shaker's digital twin: what the server believes about the block and the holder.

Pure Python, no I/O. State changes only through :meth:`HeaterShakerTwin.apply`, which
validates one primitive and returns the events it causes, or raises :class:`ValidationFailed`
with a fix hint, and through :meth:`HeaterShakerTwin.adopt` (what the instrument reports).
The current temperature is belief between read-backs: the block ramps on its own, so the
server adopts what the instrument reports after every command.

Validation codes: OUT_OF_RANGE (temperature or speed outside what the instrument can do),
PRECONDITION_FAILED (no plate on the holder for lock/shake/hold, plate not locked for shake,
unlock while shaking, wait without a target). A plate that is missing is PRECONDITION_FAILED
rather than UNKNOWN_LABWARE: the plate may well exist in the lab, it is just not here.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from device_servers.errors import Code, ValidationFailed
from device_servers.heater_shaker.commands import (
    Hold,
    HSCommand,
    LockPlate,
    Primitive,
    SetTemperature,
    Shake,
    Stop,
    UnlockPlate,
    WaitForTemperature,
)
from device_servers.kind import HoldsOnePlate, TwinBase, deviation

_TEMP_TOL = 0.05  # C: below this, believed and reported targets agree


@dataclass(frozen=True, slots=True)
class Limits:
    """What the instrument can physically do (from its configuration)."""

    temperature_range_c: tuple[float, float]
    rpm_range: tuple[int, int]
    ramp_c_per_min: float
    ambient_c: float

    @classmethod
    def of(cls, snap: dict[str, Any]) -> Limits:
        """The limits a snapshot's ``limits`` section gives (ambient: 22 C if absent)."""
        low, high = snap["temperature_range_c"]
        slow, fast = snap["rpm_range"]
        ambient = float(snap.get("ambient_c", 22.0))
        return cls(
            (float(low), float(high)),
            (int(slow), int(fast)),
            float(snap["ramp_c_per_min"]),
            ambient,
        )


@dataclass
class HeaterShakerTwin(HoldsOnePlate, TwinBase):
    """Belief state of one heater-shaker."""

    holder: str
    limits: Limits
    current_c: float
    target_c: float | None = None
    locked: bool = False
    shaking: bool = False
    rpm: int = 0
    plate: str | None = None
    plate_type: str | None = None
    # Plate id -> PyLabRobot type of every plate that may come here (from the lab).
    plate_types: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------------ copies & snapshots
    def clone(self) -> HeaterShakerTwin:
        return replace(self, plate_types=self.plate_types)

    def snapshot(self, full: bool = False) -> dict[str, Any]:
        """Structured state; ``full`` adds what persistence needs to rebuild the twin."""
        labware = self.held_labware(locked=self.locked)
        snap: dict[str, Any] = {
            "holder": self.holder,
            "target_c": self.target_c,
            "current_c": round(self.current_c, 2),
            "locked": self.locked,
            "shaking": self.shaking,
            "rpm": self.rpm,
            "plate": self.plate,
            "labware": labware,
            "limits": {
                "temperature_range_c": list(self.limits.temperature_range_c),
                "rpm_range": list(self.limits.rpm_range),
                "ramp_c_per_min": self.limits.ramp_c_per_min,
            },
        }
        if full:
            snap["limits"]["ambient_c"] = self.limits.ambient_c
            snap["plate_type"] = self.plate_type
        return snap

    @classmethod
    def from_snapshot(
        cls, snap: dict[str, Any], plate_types: dict[str, str] | None = None
    ) -> HeaterShakerTwin:
        """Rebuild a twin persisted with ``snapshot(full=True)``."""
        return cls(
            holder=snap["holder"],
            limits=Limits.of(snap["limits"]),
            current_c=float(snap["current_c"]),
            target_c=snap["target_c"],
            locked=bool(snap["locked"]),
            shaking=bool(snap["shaking"]),
            rpm=int(snap["rpm"]),
            plate=snap["plate"],
            plate_type=snap.get("plate_type"),
            plate_types=dict(plate_types or {}),
        )

    # ------------------------------------------------------------------ expansion
    def expand(self, cmd: HSCommand) -> list[Primitive]:
        """One primitive per command; the wait carries the target it waits for."""
        if isinstance(cmd, SetTemperature):
            return [Primitive("set_temperature", celsius=cmd.celsius)]
        if isinstance(cmd, WaitForTemperature):
            return [
                Primitive(
                    "wait_for_temperature",
                    celsius=self.target_c,
                    tolerance_c=cmd.tolerance_c,
                    timeout_s=cmd.timeout_s,
                )
            ]
        if isinstance(cmd, Shake):
            return [Primitive("shake", rpm=cmd.rpm, duration_s=cmd.duration_s)]
        if isinstance(cmd, Hold):
            return [Primitive("hold", duration_s=cmd.duration_s)]
        if isinstance(cmd, Stop):
            return [Primitive("stop")]
        if isinstance(cmd, LockPlate):
            return [Primitive("lock")]
        if isinstance(cmd, UnlockPlate):
            return [Primitive("unlock")]
        raise ValidationFailed(  # pragma: no cover - the runtime parses commands first
            Code.INVALID_ARGUMENT, f"not a heater-shaker command: {cmd!r}", "see the tool list"
        )

    # ------------------------------------------------------------------ validation + effect
    def apply(self, p: Primitive) -> tuple[Primitive, list[dict[str, Any]]]:
        """Validate one primitive against the belief and apply it; return its events."""
        if p.op == "set_temperature":
            return p, self._set_temperature(p)
        if p.op == "wait_for_temperature":
            ramp_s, events = self._wait(p)
            # How long it waits: the ramp from the believed temperature (for the timeline).
            return replace(p, duration_s=ramp_s), events
        if p.op == "shake":
            return p, self._shake(p)
        if p.op == "hold":
            self._need_plate("hold")
            data = {"duration_s": p.duration_s, "target_c": self.target_c, "plate": self.plate}
            return p, [{"type": "hold_completed", "data": data}]
        if p.op == "stop":
            self.target_c, self.shaking, self.rpm = None, False, 0
            return p, [{"type": "heater_shaker_stopped", "data": {}}]
        if p.op == "lock":
            self._need_plate("lock_plate")
            self.locked = True
            return p, [{"type": "plate_locked", "data": {"plate": self.plate}}]
        if self.shaking:  # unlock
            raise ValidationFailed(
                Code.PRECONDITION_FAILED,
                "the plate cannot be unlocked while the instrument is shaking",
                "call stop first, then unlock_plate",
            )
        self.locked = False
        return p, [{"type": "plate_unlocked", "data": {"plate": self.plate}}]

    def _set_temperature(self, p: Primitive) -> list[dict[str, Any]]:
        assert p.celsius is not None
        low, high = self.limits.temperature_range_c
        if not low <= p.celsius <= high:
            raise ValidationFailed(
                Code.OUT_OF_RANGE,
                f"{p.celsius} C is outside the block's range {low:g} to {high:g} C",
                f"choose a temperature from {low:g} to {high:g} C",
            )
        self.target_c = p.celsius
        return [{"type": "temperature_set", "data": {"target_c": p.celsius}}]

    def _wait(self, p: Primitive) -> tuple[float, list[dict[str, Any]]]:
        if p.celsius is None or self.target_c is None:
            raise ValidationFailed(
                Code.PRECONDITION_FAILED,
                "no target temperature is set: there is nothing to wait for",
                "call set_temperature first (read_back if it was set elsewhere)",
            )
        events: list[dict[str, Any]] = []
        ramp_s = abs(self.target_c - self.current_c) / self.limits.ramp_c_per_min * 60
        if p.timeout_s is not None and ramp_s > p.timeout_s:
            events.append(
                {
                    "type": "warning",
                    "data": {
                        "what": "timeout_shorter_than_ramp",
                        "predicted_ramp_s": round(ramp_s, 1),
                        "timeout_s": p.timeout_s,
                    },
                }
            )
        self.current_c = self.target_c
        return round(ramp_s, 3), events

    def _shake(self, p: Primitive) -> list[dict[str, Any]]:
        assert p.rpm is not None and p.duration_s is not None
        low, high = self.limits.rpm_range
        if not low <= p.rpm <= high:
            raise ValidationFailed(
                Code.OUT_OF_RANGE,
                f"{p.rpm} rpm is outside the shaker's range {low} to {high} rpm",
                f"choose a speed from {low} to {high} rpm",
            )
        self._need_plate("shake")
        if not self.locked:
            raise ValidationFailed(
                Code.PRECONDITION_FAILED,
                "the plate is not locked: shaking would throw it off the holder",
                "call lock_plate first",
            )
        # A timed shake ends stopped: the speed it ran at is in the event.
        self.shaking, self.rpm = False, 0
        return [{"type": "shake_completed", "data": {"rpm": p.rpm, "duration_s": p.duration_s}}]

    def _need_plate(self, what: str) -> None:
        if self.plate is None:
            raise ValidationFailed(
                Code.PRECONDITION_FAILED,
                f"{what}: there is no plate on {self.holder}",
                f"put a plate on {self.holder} (plate mover), then read_back so the twin "
                "sees it, and retry",
            )

    def predicted(self, prim: Primitive) -> list[dict[str, Any]]:
        """A wait yields the ``temperature_reached`` event the instrument would report; on the
        instrument that event comes from the adapter, measured."""
        if prim.op != "wait_for_temperature":
            return []
        return [
            {
                "type": "temperature_reached",
                "data": {"target_c": prim.celsius, "current_c": prim.celsius, "predicted": True},
            }
        ]

    # ------------------------------------------------------------------ the lab around it
    @property
    def place(self) -> str:
        return self.holder

    def facts(self) -> dict[str, Any]:
        """What ``require_state`` rules may check (belief, kept fresh by the read back)."""
        return {
            "plate_present": self.plate is not None,
            "plate": self.plate,
            "plate_locked": self.locked,
            "locked": self.locked,
            "shaking": self.shaking,
            "heating": self.target_c is not None,
        }

    # ------------------------------------------------------------------ read back
    def adopt(self, seen: dict[str, Any], touched: set[str] | None) -> list[dict[str, Any]]:
        """Adopt what the instrument reports; list every disagreement with the belief.

        The current temperature is a measurement of a block that ramps on its own: it is
        adopted without a deviation. Target, clamp, motor and plate are settings: a
        disagreement is a deviation.
        """
        deviations: list[dict[str, Any]] = []
        if "current_c" in seen and seen["current_c"] is not None:
            self.current_c = float(seen["current_c"])
        if "target_c" in seen:
            obs = seen["target_c"]
            same = (obs is None and self.target_c is None) or (
                obs is not None
                and self.target_c is not None
                and abs(float(obs) - self.target_c) <= _TEMP_TOL
            )
            if not same:
                deviations.append(deviation("target_c", self.target_c, obs))
                self.target_c = None if obs is None else float(obs)
        for key in ("locked", "shaking", "rpm"):
            if key in seen and seen[key] != getattr(self, key):
                deviations.append(deviation(key, getattr(self, key), seen[key]))
                setattr(self, key, seen[key])
        return deviations + self.adopt_plate(seen)
