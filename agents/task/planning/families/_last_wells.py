"""The wells the clause before filled, as the destination of an "add" that names only its
source: "PCR1 A1-H1 gets 20 uL master mix; add 5 uL cDNA from cDNA_plate A1-H1" adds the
template to the reactions just set up. Only when the source wells pair with those wells
one to one (or there is one source well): otherwise the destination is asked.
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._wellsets import SelectionError

_ADD = re.compile(r"^(?:add|spike(?:\s+in)?)\b", re.IGNORECASE)
_JOINED = ("then", "and", "comma", "semicolon", "sentence", "item")


def added_to_last(frame: Frame, p: r.Planning) -> tuple[str, list[str]] | None:
    """(plate, wells) just filled, when ``frame`` adds from named source wells only."""
    if not (p.plate and p.wells and _ADD.match(frame.text)):
        return None
    if frame.clause.joined not in _JOINED or not frame.places:
        return None
    if any(role != "source" for role, _ in frame.places):
        return None
    count = 0
    for _, place in frame.places:
        if place.labware is None or place.wells is None or place.labware.name == p.plate:
            return None
        view = p.world.labware(place.labware.name)
        try:
            count += len(place.wells.expand(view.rows, view.cols))
        except SelectionError:
            return None
    if count not in (1, len(p.wells)):
        return None
    return p.plate, list(p.wells)
