"""The thermocycler's digital twin: what the server believes about its lid, block and plate.

Pure Python, no I/O. State changes only through :meth:`ThermocyclerTwin.apply` (validate one
primitive, return its events, or raise :class:`ValidationFailed` with a fix hint) and
:meth:`ThermocyclerTwin.adopt` (what the instrument reports). Current temperatures are
belief between read-backs: the block and lid ramp on their own.

Validation codes: OUT_OF_RANGE (a temperature the machine cannot reach), PRECONDITION_FAILED
(a profile with the lid open or no plate on the block).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from device_servers.errors import Code, ValidationFailed
from device_servers.kind import HoldsOnePlate, TwinBase, deviation
from device_servers.thermocycler.commands import (
    RAMP_ESTIMATE_C_PER_S,
    CloseLid,
    Cycle,
    OpenLid,
    Primitive,
    RunProfile,
    SetBlockTemperature,
    SetLidTemperature,
    Stop,
    TCCommand,
)

_TEMP_TOL = 0.05  # C: below this, believed and reported targets agree


@dataclass
class ThermocyclerTwin(HoldsOnePlate, TwinBase):
    """Belief state of one thermocycler."""

    block: str  # its place, <id>:block
    block_range_c: tuple[float, float]
    lid_range_c: tuple[float, float]
    block_c: float
    lid_c: float
    lid_open: bool = True
    block_target_c: float | None = None
    lid_target_c: float | None = None
    plate: str | None = None
    plate_type: str | None = None
    cycles_done: int = 0  # of the last profile
    plate_types: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------------ copies & snapshots
    def clone(self) -> ThermocyclerTwin:
        return replace(self, plate_types=self.plate_types)

    def snapshot(self, full: bool = False) -> dict[str, Any]:
        labware = self.held_labware()
        snap: dict[str, Any] = {
            "block": self.block,
            "lid_open": self.lid_open,
            "block_target_c": self.block_target_c,
            "block_c": round(self.block_c, 2),
            "lid_target_c": self.lid_target_c,
            "lid_c": round(self.lid_c, 2),
            "plate": self.plate,
            "cycles_done": self.cycles_done,
            "labware": labware,
            "limits": {
                "block_range_c": list(self.block_range_c),
                "lid_range_c": list(self.lid_range_c),
            },
        }
        if full:
            snap["plate_type"] = self.plate_type
            snap["plate_types"] = dict(self.plate_types)
        return snap

    @classmethod
    def from_snapshot(cls, snap: dict[str, Any]) -> ThermocyclerTwin:
        """Rebuild a twin persisted with ``snapshot(full=True)`` (plate types included)."""
        ranges = {k: (float(v[0]), float(v[1])) for k, v in snap["limits"].items()}
        return cls(
            block=snap["block"],
            block_range_c=ranges["block_range_c"],
            lid_range_c=ranges["lid_range_c"],
            block_c=float(snap["block_c"]),
            lid_c=float(snap["lid_c"]),
            lid_open=bool(snap["lid_open"]),
            block_target_c=snap["block_target_c"],
            lid_target_c=snap["lid_target_c"],
            plate=snap["plate"],
            plate_type=snap.get("plate_type"),
            cycles_done=int(snap.get("cycles_done", 0)),
            plate_types=dict(snap.get("plate_types", {})),
        )

    # ------------------------------------------------------------------ expansion
    def expand(self, cmd: TCCommand) -> Iterator[Primitive]:
        """One primitive per command; a profile is one primitive per cycle of each stage."""
        if isinstance(cmd, OpenLid):
            yield Primitive("open_lid")
        elif isinstance(cmd, CloseLid):
            yield Primitive("close_lid")
        elif isinstance(cmd, SetBlockTemperature):
            yield Primitive("set_block", celsius=cmd.celsius)
        elif isinstance(cmd, SetLidTemperature):
            yield Primitive("set_lid", celsius=cmd.celsius)
        elif isinstance(cmd, Stop):
            yield Primitive("stop")
        elif isinstance(cmd, RunProfile):
            if cmd.lid_celsius is not None:
                yield Primitive("set_lid", celsius=cmd.lid_celsius)
            for i, stage in enumerate(cmd.stages, 1):
                steps = tuple((s.celsius, s.hold_s) for s in stage.steps)
                for k in range(1, stage.repeats + 1):
                    yield Primitive("cycle", cycle=Cycle(i, k, stage.repeats, steps))
        else:  # pragma: no cover - the runtime parses commands first
            raise ValidationFailed(Code.INVALID_ARGUMENT, f"not a thermocycler command: {cmd!r}")

    # ------------------------------------------------------------------ validation + effect
    def apply(self, p: Primitive) -> tuple[Primitive, list[dict[str, Any]]]:
        """Validate one primitive against the belief and apply it; return its events."""
        if p.op == "open_lid":
            self.lid_open = True
            return p, [{"type": "lid_opened", "data": {"plate": self.plate}}]
        if p.op == "close_lid":
            self.lid_open = False
            return p, [{"type": "lid_closed", "data": {"plate": self.plate}}]
        if p.op == "set_block":
            assert p.celsius is not None
            self._within("block", p.celsius, self.block_range_c)
            self.block_target_c = p.celsius
            return p, [{"type": "temperature_set", "data": {"block_target_c": p.celsius}}]
        if p.op == "set_lid":
            assert p.celsius is not None
            self._within("lid", p.celsius, self.lid_range_c)
            self.lid_target_c = p.celsius
            return p, [{"type": "temperature_set", "data": {"lid_target_c": p.celsius}}]
        if p.op == "stop":
            self.block_target_c = self.lid_target_c = None
            return p, [{"type": "thermocycler_stopped", "data": {}}]
        return p, self._cycle(p)

    def _cycle(self, p: Primitive) -> list[dict[str, Any]]:
        if self.lid_open:
            raise ValidationFailed(
                Code.PRECONDITION_FAILED,
                "the lid is open: a profile would evaporate the samples",
                "call close_lid first",
            )
        if self.plate is None:
            raise ValidationFailed(
                Code.PRECONDITION_FAILED,
                f"there is no plate on {self.block}",
                f"put a plate on {self.block} (plate mover), then read_back so the twin sees "
                "it, and retry",
            )
        assert p.cycle is not None
        for celsius, _ in p.cycle.steps:
            self._within("block", celsius, self.block_range_c)
        if (p.cycle.stage, p.cycle.number) == (1, 1):
            self.cycles_done = 0
        self.cycles_done += 1
        self.block_target_c = self.block_c = p.cycle.steps[-1][0]
        return []

    def _within(self, what: str, celsius: float, limits: tuple[float, float]) -> None:
        low, high = limits
        if not low <= celsius <= high:
            raise ValidationFailed(
                Code.OUT_OF_RANGE,
                f"{celsius:g} C is outside the {what}'s range {low:g} to {high:g} C",
                f"choose a {what} temperature from {low:g} to {high:g} C",
            )

    def predicted(self, prim: Primitive) -> list[dict[str, Any]]:
        """A cycle yields the ``cycle_completed`` event the instrument would report; on the
        instrument it comes from the adapter, measured."""
        if prim.op != "cycle":
            return []
        return [{"type": "cycle_completed", "data": {**cycle_data(prim), "predicted": True}}]

    # ------------------------------------------------------------------ the lab around it
    @property
    def place(self) -> str:
        return self.block

    def facts(self) -> dict[str, Any]:
        """What ``require_state`` rules and the block's station check (belief)."""
        return {
            "lid_open": self.lid_open,
            "running": False,  # a profile runs only inside a command: never between them
            "plate_present": self.plate is not None,
            "plate": self.plate,
            "block_target_c": self.block_target_c,
            "lid_target_c": self.lid_target_c,
            "cycles_done": self.cycles_done,
        }

    # ------------------------------------------------------------------ read back
    def adopt(self, seen: dict[str, Any], touched: set[str] | None) -> list[dict[str, Any]]:
        """Adopt what the instrument reports; every disagreement with a setting is a
        deviation (current temperatures are measurements, adopted without one)."""
        deviations: list[dict[str, Any]] = []
        for key, attr in (("block_c", "block_c"), ("lid_c", "lid_c")):
            if seen.get(key) is not None:
                setattr(self, attr, float(seen[key]))
        for key in ("block_target_c", "lid_target_c"):
            if key not in seen:
                continue
            obs, believed = seen[key], getattr(self, key)
            same = (obs is None and believed is None) or (
                obs is not None and believed is not None and abs(float(obs) - believed) <= _TEMP_TOL
            )
            if not same:
                deviations.append(deviation(key, believed, obs))
                setattr(self, key, None if obs is None else float(obs))
        if "lid_open" in seen and bool(seen["lid_open"]) != self.lid_open:
            deviations.append(deviation("lid_open", self.lid_open, bool(seen["lid_open"])))
            self.lid_open = bool(seen["lid_open"])
        deviations += self.adopt_plate(seen)
        # How many cycles of the last profile happened: after a crash mid-profile this tells
        # exactly where to go on (the rest of the cycles, never one twice).
        done = seen.get("cycles_done")
        if isinstance(done, int) and done != self.cycles_done:
            deviations.append(deviation("cycles_done", self.cycles_done, done))
            self.cycles_done = done
        return deviations


def cycle_data(prim: Primitive) -> dict[str, Any]:
    """What a cycle event says: which stage and cycle, of how many, at which temperatures,
    and how long it takes (holds, plus ramps between its steps at a typical rate)."""
    assert prim.cycle is not None
    cycle = prim.cycle
    temps = [c for c, _ in cycle.steps]
    ramps = sum(abs(b - a) for a, b in zip(temps, temps[1:] + temps[:1], strict=True))
    return {
        "stage": cycle.stage,
        "cycle": cycle.number,
        "of": cycle.of,
        "steps": [{"celsius": c, "hold_s": h} for c, h in cycle.steps],
        "duration_s": round(sum(h for _, h in cycle.steps) + ramps / RAMP_ESTIMATE_C_PER_S, 1),
    }
