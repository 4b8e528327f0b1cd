"""The plate mover's digital twin: where the arm believes each of its plates is.

Pure Python, no I/O. A plate held by the arm is at the pseudo-location ``<arm>:gripper``
(the simulated world uses the same name). State changes only through
:meth:`PlateMoverTwin.apply`, which validates one primitive and returns its events, or raises
:class:`ValidationFailed` with a fix hint, and :meth:`PlateMoverTwin.adopt` (what the
instrument reports).

The twin knows only the plates this arm may move. Plates it does not know (a reservoir left on
a deck slot) are what the instrument sees; the driver reads them for the policies.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from device_servers.errors import Code, ValidationFailed
from device_servers.kind import TwinBase, deviation
from device_servers.plate_mover.commands import Home, MovePlate, PMCommand, Primitive


class PlateMoverTwin(TwinBase):
    """Belief state of one plate mover."""

    def __init__(
        self,
        instrument: str,
        workspace: list[str],
        plates: dict[str, str | None],
        plate_types: dict[str, str] | None = None,
        homed: bool = False,
    ) -> None:
        self.instrument = instrument
        self.workspace = list(workspace)
        self.plates = dict(plates)
        self.plate_types = dict(plate_types or {})
        self.homed = homed

    @property
    def gripper(self) -> str:
        return f"{self.instrument}:gripper"

    @property
    def holding(self) -> str | None:
        """The plate believed to be in the gripper."""
        return next((p for p, loc in self.plates.items() if loc == self.gripper), None)

    def occupant(self, location: str) -> str | None:
        """The plate believed to be at ``location``."""
        return next((p for p, loc in self.plates.items() if loc == location), None)

    # ------------------------------------------------------------------ copies & snapshots
    def clone(self) -> PlateMoverTwin:
        return PlateMoverTwin(
            self.instrument, self.workspace, self.plates, self.plate_types, self.homed
        )

    def snapshot(self, full: bool = False) -> dict[str, Any]:
        """Structured state: plates (as labware), workspace occupancy, gripper, homed."""
        snap: dict[str, Any] = {
            "labware": {
                p: {"kind": "plate", "type": self.plate_types.get(p), "location": loc}
                for p, loc in self.plates.items()
            },
            "locations": {where: self.occupant(where) for where in self.workspace},
            "holding": self.holding,
            "homed": self.homed,
        }
        if full:
            snap["instrument"] = self.instrument
            snap["plates"] = dict(self.plates)
            snap["plate_types"] = dict(self.plate_types)
            snap["workspace"] = list(self.workspace)
        return snap

    @classmethod
    def from_snapshot(cls, snap: dict[str, Any]) -> PlateMoverTwin:
        """Rebuild a twin persisted with ``snapshot(full=True)``."""
        return cls(
            snap["instrument"],
            snap["workspace"],
            snap["plates"],
            snap.get("plate_types", {}),
            bool(snap.get("homed", False)),
        )

    # ------------------------------------------------------------------ validation
    def check_static(self, cmd: PMCommand) -> None:
        """Checks that do not depend on belief: the plate is ours, the destination reachable."""
        if not isinstance(cmd, MovePlate):
            return
        if cmd.plate not in self.plates:
            raise ValidationFailed(
                Code.UNKNOWN_LABWARE,
                f"{self.instrument} may not move a plate named {cmd.plate!r}",
                f"plates this arm moves: {', '.join(sorted(self.plates)) or '(none configured)'}",
            )
        if cmd.to_location not in self.workspace:
            raise ValidationFailed(
                Code.OUT_OF_RANGE,
                f"{cmd.to_location!r} is outside the workspace of {self.instrument}",
                f"choose one of: {', '.join(self.workspace)}",
            )

    def is_no_op(self, cmd: PMCommand) -> bool:
        """The plate is already where it should go."""
        return isinstance(cmd, MovePlate) and self.plates.get(cmd.plate) == cmd.to_location

    # ------------------------------------------------------------------ expansion
    def expand(self, cmd: PMCommand) -> Iterator[Primitive]:
        """The motions a command consists of."""
        if isinstance(cmd, Home):
            yield Primitive("home")
            return
        if not isinstance(cmd, MovePlate):  # pragma: no cover - the command table is closed
            raise ValidationFailed(Code.INVALID_ARGUMENT, f"unknown command {cmd!r}", "")
        self.check_static(cmd)
        if self.is_no_op(cmd):
            return
        where = self.plates[cmd.plate]
        held = self.holding
        if held is not None and held != cmd.plate:
            raise ValidationFailed(
                Code.PRECONDITION_FAILED,
                f"the gripper of {self.instrument} holds {held}",
                f"place {held} first: move_plate(plate={held!r}, to_location=<a free location>)",
            )
        if where is None:
            raise ValidationFailed(
                Code.PRECONDITION_FAILED,
                f"where {cmd.plate} is, is unknown",
                "read_back the arm; if it still cannot tell, a person puts the plate on a "
                "known location and confirms it",
            )
        if where != self.gripper and where not in self.workspace:
            raise ValidationFailed(
                Code.OUT_OF_RANGE,
                f"{cmd.plate} is at {where}, outside the workspace of {self.instrument}",
                "a person (or another arm) brings it into the workspace first",
            )
        self._check_free(cmd.plate, cmd.to_location)
        if not self.homed:
            yield Primitive("home")
        if where != self.gripper:
            yield Primitive("pick", cmd.plate, where)
        yield Primitive("place", cmd.plate, cmd.to_location, origin=where)

    def _check_free(self, plate: str, location: str) -> None:
        other = self.occupant(location)
        if other is not None and other != plate:
            free = [w for w in self.workspace if self.occupant(w) is None]
            raise ValidationFailed(
                Code.DECK_COLLISION,
                f"{location} already holds {other}",
                f"move {other} away first, or choose a free location: "
                f"{', '.join(free) or '(none free)'}",
            )

    # ------------------------------------------------------------------ apply
    def apply(self, p: Primitive) -> tuple[Primitive, list[dict[str, Any]]]:
        """Validate and apply one motion; return it with its events."""
        if p.op == "home":
            self.homed = True
            return p, []
        plate = p.plate or ""
        if plate not in self.plates:
            raise ValidationFailed(
                Code.UNKNOWN_LABWARE, f"{self.instrument} does not move {plate!r}", ""
            )
        if p.op == "pick":
            held = self.holding
            if held is not None:
                raise ValidationFailed(
                    Code.PRECONDITION_FAILED,
                    f"the gripper already holds {held}",
                    f"place {held} before picking {plate}",
                )
            if self.plates[plate] != p.location:
                raise ValidationFailed(
                    Code.PRECONDITION_FAILED,
                    f"{plate} is believed at {self.plates[plate]}, not {p.location}",
                    "read_back the arm, then retry",
                )
            self.plates[plate] = self.gripper
            return p, []
        if self.holding != plate:
            raise ValidationFailed(
                Code.PRECONDITION_FAILED,
                f"the gripper does not hold {plate}",
                f"pick {plate} first (move_plate does)",
            )
        location = p.location or ""
        if location not in self.workspace:
            raise ValidationFailed(Code.OUT_OF_RANGE, f"{location!r} is outside the workspace", "")
        self._check_free(plate, location)
        self.plates[plate] = location
        event = {
            "type": "plate_moved",
            "data": {"plate": plate, "from": p.origin or self.gripper, "to": location},
        }
        return p, [event]

    def finished(self, cmd: PMCommand, prims: list[Primitive]) -> list[dict[str, Any]]:
        if not (isinstance(cmd, MovePlate) and not prims):
            return []
        return [
            {
                "type": "warning",
                "data": {
                    "what": "already_there",
                    "plate": cmd.plate,
                    "location": cmd.to_location,
                    "detail": f"{cmd.plate} is already at {cmd.to_location}: nothing moves",
                },
            }
        ]

    # ------------------------------------------------------------------ the lab around it
    def assume(self, plate: str, location: str | None) -> None:
        """Simulation: another step put ``plate`` at ``location`` (only plates this arm moves)."""
        if plate in self.plates and location is not None:
            self.plates[plate] = location

    # ------------------------------------------------------------------ read back
    def adopt(self, seen: dict[str, Any], touched: set[str] | None) -> list[dict[str, Any]]:
        """Adopt the plate places and homing the instrument reports; list disagreements."""
        deviations: list[dict[str, Any]] = []
        for plate, observed in seen.get("locations", {}).items():
            if (touched is not None and plate not in touched) or plate not in self.plates:
                continue
            if self.plates[plate] != observed:
                deviations.append(
                    deviation("plate_location", self.plates[plate], observed, labware=plate)
                )
                self.plates[plate] = observed
        homed = seen.get("homed")
        if isinstance(homed, bool) and homed != self.homed:
            deviations.append(deviation("homed", self.homed, homed))
            self.homed = homed
        return deviations
