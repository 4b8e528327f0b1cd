"""Stations: how a plate reaches an instrument, and when a place is ready for it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import Field

from device_servers.contract._config import Station, Strict


def find_station(stations: Iterable[Station], place: str) -> Station | None:
    """The station describing ``place``: by its name, or one ending in ``:*`` that covers it
    (every slot of a carrier, ``lh1:plate_carrier:*``)."""
    found = None
    for station in stations:
        if station.place == place:
            return station
        if station.place.endswith(":*") and place.startswith(station.place[:-1]):
            found = found or station
    return found


def station_ready(station: Station | None, facts: dict[str, Any] | None) -> bool | None:
    """Whether a plate may enter or leave ``station`` given its instrument's ``facts``.

    False for a place no instrument describes (an unknown place is never ready) or a fact
    that does not hold; None when a fact it needs is unknown (counts as not ready too).
    """
    if station is None:
        return False
    if not station.requires:
        return True
    if facts is None:
        return None
    unknown = False
    for req in station.requires:
        value = facts.get(req.fact, req.default)
        if value is None:
            unknown = True
        elif bool(value) != req.equals:
            return False
    return None if unknown else True


def after_command(stations: list[Station], command: str, facts: dict[str, Any]) -> None:
    """How an instrument's command changes the facts its stations need (simulations)."""
    for station in stations:
        for req in station.requires:
            if command == req.made_by:
                facts[req.fact] = req.equals
            elif command == req.undone_by:
                facts[req.fact] = not req.equals


class LabFacts(Strict):
    """What the lab file tells each instrument about the others (see ``InstrumentBase.wired``).

    ``plate_types``: plate id -> PyLabRobot type; ``starts``: plate id -> where it starts;
    ``owners``: every instrument id, plus places every lab has (``hotel``); ``stations``:
    every place an instrument offers, by place.
    """

    plate_types: dict[str, str] = Field(default_factory=dict)
    starts: dict[str, str] = Field(default_factory=dict)
    owners: frozenset[str] = frozenset()
    stations: dict[str, Station] = Field(default_factory=dict)
