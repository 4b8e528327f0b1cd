"""The plate mover's configuration: its workspace, the plates it moves, how fast it is."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from device_servers.contract import (
    InstrumentBase,
    LabFacts,
    PlateTypes,
    Station,
    Timed,
    find_station,
    location_owner,
)


class PlateMoverConfig(InstrumentBase, Timed, PlateTypes):
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
    stations_reached: dict[str, Station] = Field(
        default_factory=dict,
        description="How a plate reaches each location (filled by the lab from every instrument).",
    )

    def stations(self) -> list[Station]:
        """The shared places of its workspace (a hotel), which no instrument of their own
        describes: reachable whenever."""
        return [s for s in self.stations_reached.values() if s.role == "shelf"]

    def wired(self, lab: LabFacts) -> PlateMoverConfig:
        """Plate types of the lab; every location owned by an instrument; where plates start.

        Plates start where their instrument says (a liquid-handler deck slot), unless
        ``initial_locations`` says otherwise; a plate that starts nowhere is an error.
        """
        for where in self.locations:
            if location_owner(where) not in lab.owners:
                raise ValueError(
                    f"locations: {where!r} belongs to no instrument "
                    f"(owners: {', '.join(sorted(lab.owners))})"
                )
        initial = {p: lab.starts[p] for p in self.plates if p in lab.starts}
        initial.update(self.initial_locations)
        missing = [p for p in self.plates if p not in initial]
        if missing:
            raise ValueError(
                f"plates: {', '.join(missing)} start nowhere: put them on a liquid-handler "
                "deck or give initial_locations"
            )
        known = list(lab.stations.values())
        reached = {w: s for w in self.locations if (s := find_station(known, w)) is not None}
        return self.model_copy(
            update={
                "plate_types": {**lab.plate_types, **self.plate_types},
                "initial_locations": initial,
                "stations_reached": reached,
            }
        )
