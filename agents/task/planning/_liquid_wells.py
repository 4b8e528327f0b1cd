"""Wells named right after a liquid are where that liquid is: "1:10 of lysate columns 3 and 4
into quant2", "2 uL of amplicon A1 into each of them", "compound stocks A1-A4 into ip_0042";
so are wells right before it: "the column 2 PCR products diluted 1:10 into ...".

A liquid kept in many wells of one plate (48 lysates, 88 compound stocks) is found by its wells:
the plate that holds that liquid in every one of them is the source. Two plates that both fit
are asked about; wells where no plate holds the liquid are left to the builders (which ask).
Only a clause that also says where the liquid goes (a destination, or "into each of them")
reads the wells so: "lysate A1-A4" alone may be where something is put.
"""

from __future__ import annotations

import re

from agents.task.planning._frames import Frame, Place
from agents.task.planning._lexicon import Mention
from agents.task.planning._outcomes import Ask
from agents.task.planning._wellsets import SelectionError, WellSet
from agents.task.planning._world import World
from agents.task.planning.families import Family

Read = list[tuple[Frame | None, Family | None]]

# Between a liquid's name and its wells: "lysate A3", "lysate in A3", "lysate (wells A1-A4)",
# "extract from A1-H1", "lysate, columns 3 and 4".
_JOIN = re.compile(
    r"\s*,?\s*\(?\s*(?:(?:in|from|at|of|on)\s+)?(?:the\s+)?(?:wells?\s+)?(?:of\s+)?", re.IGNORECASE
)

# "top standard in A1, then 1:3 down to F1": the curve's first well, not where the stock is
_TOP = re.compile(r"\b(?:top|highest|neat)\s+(?:conc\w*\s+(?:of\s+)?)?(?:the\s+)?$", re.IGNORECASE)


def liquid_wells(read_in: Read, world: World) -> Read:
    """``read_in`` with each liquid's own wells bound to the one plate holding it there."""
    for frame, _ in read_in:
        if frame is not None:
            _bind(frame, world)
    return read_in


def _bind(frame: Frame, world: World) -> None:
    goes = frame.ents.refers_back or any(
        role == "dest" and not pl.empty for role, pl in frame.places
    )
    if not goes:
        return
    for i, (role, place) in enumerate(frame.places):
        if role not in ("head", "source") or not _loose(place) or place.wells is None:
            continue
        liquid = _named_before(frame, place.wells)
        if liquid is None or liquid.name not in world.liquids:
            continue
        plates = holders(liquid.name, place.wells, world)
        if len(plates) > 1:
            raise Ask(
                f"{liquid.written} {place.wells.text} is on {' and '.join(plates)}: which plate "
                "should I take it from?",
                ["source"],
                plates,
            )
        if not plates:
            continue
        place.labware = Mention(plates[0], liquid.start, liquid.end, liquid.written, True)
        frame.places[i] = ("source", place)
        if frame.head is place:
            frame.head = next((pl for r, pl in frame.places if r == "head"), Place())
        if frame.source.empty:
            frame.source = place


def _loose(place: Place) -> bool:
    return place.labware is None and place.unknown is None


def _named_before(frame: Frame, wells: WellSet) -> Mention | None:
    """The liquid named just before ``wells`` (only joining words between them)."""
    for m in frame.ents.liquids:
        if m.end <= wells.start and _JOIN.fullmatch(frame.text[m.end : wells.start]):
            return None if _TOP.search(frame.text[: m.start]) else m
    for m in frame.ents.liquids:  # "the column 2 PCR products", "the row A lysates"
        if m.start >= wells.end and not frame.text[wells.end : m.start].strip():
            return m
    return None


def holders(liquid: str, wells: WellSet, world: World) -> list[str]:
    """The plates that hold ``liquid`` in every one of ``wells``."""
    found = []
    for lw in sorted({lw for lw, _, _ in world.liquids.get(liquid, [])}):
        view = world.labware(lw)
        try:
            names = wells.expand(view.rows, view.cols)
        except SelectionError:
            continue
        if names and all(world.contents.get((lw, w), {}).get(liquid, 0) > 0 for w in names):
            found.append(lw)
    return found
