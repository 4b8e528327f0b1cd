"""What a serial dilution with no fold leaves open besides it: the plate and wells it runs
through, and whether the plates it could run on are empty (so no diluent already in them
sizes the wells), for one question about all of them."""

from __future__ import annotations

from collections.abc import Callable

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning.families import _chains as geometry


def unsaid(frame: Frame, p: r.Planning, place: Place) -> tuple[list[Callable[[], object]], bool]:
    """The probes that raise the question each unsettled place would (the plate, then its
    chains), and whether every plate the series could run on is empty."""
    plate: list[str] = []

    def the_plate() -> None:
        plate.append(r.labware(place, p, "dilute across"))

    def the_chains() -> None:
        geometry.chains_of(frame, plate[0], p)

    candidates = [place.labware.name] if place.labware is not None else r.work_plates(p.world)
    empty = not any(
        volume > 0
        for (labware, _), held in p.world.contents.items()
        if labware in candidates
        for volume in held.values()
    )
    return [the_plate, the_chains], empty
