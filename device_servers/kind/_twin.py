"""The twin a kind plugs in: its protocol and what every twin does the same way."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from device_servers.errors import Code, DeviceError, ValidationFailed
from device_servers.kind._command import Deviation, Event


class Twin(Protocol):
    """Belief state of one instrument; changes only through ``apply`` and ``adopt``."""

    def clone(self) -> Twin: ...
    def expand(self, cmd: Any) -> Any: ...
    def apply(self, prim: Any) -> tuple[Any, list[Event]]: ...
    def run(self, cmd: Any) -> tuple[list[Any], list[Event]]: ...
    def snapshot(self, full: bool = False) -> dict[str, Any]: ...
    def adopt(self, seen: dict[str, Any], touched: set[str] | None) -> list[Deviation]: ...
    def assume(self, plate: str, location: str | None) -> None: ...
    def facts(self) -> dict[str, Any]: ...


class TwinBase:
    """What every twin does the same way: run a command as its primitives, list deviations.

    A subclass implements ``clone``, ``snapshot``, ``expand`` (command -> primitives), ``apply``
    (validate one primitive against the belief, change it, return its events) and ``adopt``
    (take what the instrument reports, return where it disagreed).
    """

    def expand(self, cmd: Any) -> Iterable[Any]:
        raise NotImplementedError

    def apply(self, prim: Any) -> tuple[Any, list[Event]]:
        raise NotImplementedError

    def run(self, cmd: Any) -> tuple[list[Any], list[Event]]:
        """Expand and apply a whole command; all-or-nothing is the caller's (work on a clone).

        ``predicted(prim)`` adds what the instrument itself would report after an operation
        (a simulated run shows the same event stream as a real one); ``finished`` may add
        events about the whole command.
        """
        prims: list[Any] = []
        events: list[Event] = []
        for p in self.expand(cmd):
            resolved, evs = self.apply(p)
            prims.append(resolved)
            events.extend(evs)
            events.extend(self.predicted(resolved))
        events.extend(self.finished(cmd, prims))
        return prims, events

    def predicted(self, prim: Any) -> list[Event]:
        """Events the instrument reports after ``prim`` (measured there, predicted here)."""
        return []

    def finished(self, cmd: Any, prims: list[Any]) -> list[Event]:
        """Events about the command as a whole (a no-op move's warning)."""
        return []

    def assume(self, plate: str, location: str | None) -> None:
        """Simulation: another instrument put ``plate`` at ``location`` (None: took it away)."""

    def facts(self) -> dict[str, Any]:
        """What the instrument's ``require_state`` rules may check, from belief."""
        return {}


def unknown_labware(detail: str, known: Iterable[str], hint: str = "use one of") -> DeviceError:
    """UNKNOWN_LABWARE naming what there is instead."""
    listed = ", ".join(sorted(known)) or "(none configured)"
    return ValidationFailed(Code.UNKNOWN_LABWARE, detail, f"{hint}: {listed}")


def deviation(what: str, expected: Any, observed: Any, **extra: Any) -> Deviation:
    """One disagreement between belief and instrument."""
    return {"what": what, **extra, "expected": expected, "observed": observed}


class HoldsOnePlate:
    """The part of a twin whose instrument holds at most one plate, at one place (a holder, a
    block): which plate is there, as the lab's moves and the read backs tell it."""

    plate: str | None
    plate_type: str | None
    plate_types: dict[str, str]

    @property
    def place(self) -> str:
        raise NotImplementedError

    def assume(self, plate: str, location: str | None) -> None:
        """Simulation: another instrument puts ``plate`` at the place or takes it away."""
        if location == self.place:
            self.plate, self.plate_type = plate, self.plate_types.get(plate)
        elif self.plate == plate:
            self.plate, self.plate_type = None, None

    def held_labware(self, **state: Any) -> dict[str, Any]:
        """The ``labware`` of a snapshot: the plate at the place, if any."""
        if self.plate is None:
            return {}
        return {
            self.plate: {"kind": "plate", "type": self.plate_type, "location": self.place, **state}
        }

    def adopt_plate(self, seen: dict[str, Any]) -> list[Deviation]:
        """Take the plate the instrument reports (a deviation when belief differed)."""
        if "plate" not in seen or seen["plate"] == self.plate:
            return []
        found = deviation("plate", self.plate, seen["plate"])
        self.plate = seen["plate"]
        self.plate_type = self.plate_types.get(seen["plate"] or "")
        return [found]
