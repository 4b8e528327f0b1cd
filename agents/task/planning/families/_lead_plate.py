"""A plate said first, bare, before a liquid the lab holds elsewhere and wells with no plate of
their own ("plate_1 30 uL buffer into F1 to F4", "For plate_1, 75 uL buffer to D1, D2, D3",
"plate_1 - dye 75 uL -> col 9"): the plate the work is on, the wells' plate - never a source
whose wells are asked (the buffer is in the reservoir, not on plate_1)."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place

_LEAD = re.compile(r"^\s*(?:(?:for|on|in|into|onto|to)\s+)?(?:the\s+)?$", re.IGNORECASE)


def lead_plate(
    frame: Frame, sources: list[Place], dests: list[Place]
) -> tuple[list[Place], list[Place]]:
    """(sources, destinations), a lone bare plate said first made the wells' plate."""
    world, liquid = frame.extra.get("world"), frame.liquid
    if (
        len(sources) != 1
        or sources[0].labware is None
        or sources[0].wells is not None
        or not dests
        or not all(d.labware is None and d.unknown is None and d.wells for d in dests)
        or liquid is None
        or not isinstance(world, r.World)
    ):
        return sources, dests
    plate = sources[0].labware
    held = world.liquids.get(liquid.name, [])
    if (
        not held
        or any(lw == plate.name for lw, _, _ in held)
        or not _LEAD.match(frame.text[: plate.start])
        or any(d.wells is not None and d.wells.start < plate.start for d in dests)
    ):
        return sources, dests
    return [], [Place(plate, d.wells) for d in dests]


def on_plate(places: list[Place]) -> list[Place]:
    """'Fill row B with 50 uL buffer on plate_1': wells said before the one plate they are
    on are that plate's wells, one place (never row B and then plate_1 again, twice filled)."""
    plain = [pl for pl in places if pl.labware is not None and pl.wells is None]
    loose = [pl for pl in places if pl.labware is None and pl.unknown is None and pl.wells]
    if len(plain) == 1 and loose and len(places) == 1 + len(loose):
        return [Place(plain[0].labware, pl.wells) for pl in loose]
    return places
