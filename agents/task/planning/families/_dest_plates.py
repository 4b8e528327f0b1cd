"""Which plates a transfer's places name: a place without a plate takes the one before it,
"onto the empty plate" the one that fits, and as many plates as the copies asked for."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._lexicon import Mention
from agents.task.planning._nouns import copies_said
from agents.task.planning._outcomes import Ask
from agents.task.planning.families._held import beside
from agents.task.planning.families._places import _AND

_FLAGS = re.IGNORECASE

_FRESH = re.compile(
    r"\b(?:an?|the|one)\s+(?:empty|fresh|new|clean|blank|unused|spare|other|second)\s+"
    r"(?:[\w-]+\s+)?plate\b",
    _FLAGS,
)


def _unnamed_destination(frame: Frame, p: r.Planning, sources: list[str]) -> list[Place]:
    """A destination said without its name: "onto the empty plate" (or "the other plate") is
    the one work plate that fits - holding nothing, and not a source; else it is asked,
    offering the plates it could be (never the source itself)."""
    world = p.world
    options = [lw for lw in r.work_plates(world) if lw not in sources] or r.work_plates(world)
    fresh = bool(_FRESH.search(frame.text))
    if fresh:  # (never the plate just worked on: its moves may not be on the world yet)
        other = [lw for lw in options if lw != p.plate]
        empty = [
            lw for lw in other if not any(v > 0 for (at, _), v in world.volume.items() if at == lw)
        ]
        fits = other if re.search(r"\bother\b", frame.text, _FLAGS) else empty
        if len(fits) == 1:
            return [Place(Mention(fits[0], 0, 0, fits[0], True))]
        options = fits or options
    named = [n for n in p.named if n in options]
    if (
        len(named) == 1 and not fresh
    ):  # "We're on maxisorp_1 today. Add ...", "... to each well. Plate: X"
        return [Place(Mention(named[0], 0, 0, named[0], True))]
    if _A_PLATE.search(frame.text):
        raise Ask("Which plate should I pipette into?", ["plate"], options)
    raise Ask("Which wells of which plate should receive it?", ["destination"], options)


_A_PLATE = re.compile(r"\b(?:the|a|this|that|my|our)\s+(?:[\w-]+\s+)?plate\b", _FLAGS)


def _fresh(place: Place, frame: Frame, doing: str) -> bool:
    """A destination's wells said of "the other plate", "a fresh plate" (no name)."""
    return doing == "pipette into" and place.wells is not None and bool(_FRESH.search(frame.text))


def _later_wells(a: Place, b: Place) -> bool:
    """A plate named without wells, then wells named without a plate: that plate's wells."""
    return (
        a.labware is not None
        and a.wells is None
        and b.labware is None
        and b.unknown is None
        and b.wells is not None
    )


def _resolve_places(
    places: list[Place], p: r.Planning, doing: str, implicit: list[str] | None, frame: Frame
) -> list[tuple[str, Place]]:
    """(labware, place) for each place; a place without labware takes the one before it."""
    out: list[tuple[str, Place]] = []
    places = list(places)
    if doing == "pipette into" and len(places) == 2 and _later_wells(*places):
        places = [Place(places[0].labware, places[1].wells, None)]  # "coat X with ... in row A"
    for i in range(len(places) - 1, 0, -1):  # "plate_a and plate_b columns 1-6": both plates
        a, b = places[i - 1], places[i]
        if (
            a.labware is not None
            and a.wells is None
            and b.labware is not None
            and b.wells
            and re.fullmatch(_AND, frame.text[a.labware.end : b.labware.start])
        ):
            places[i - 1] = Place(a.labware, b.wells, a.unknown)
    for place in places:
        if place.labware is None and place.unknown is None and _fresh(place, frame, doing):
            out.append((_unnamed_destination(frame, p, [])[0].labware.name, place))  # type: ignore[union-attr]
            continue  # "each well of the other plate": never the plate just worked on
        if place.labware is None and place.unknown is None and out:
            out.append((out[-1][0], place))
            continue
        if place.wells is None and out and out[-1][1].wells is not None:
            # "every well of plate_1 and plate_2": the same wells on the next plate
            place = Place(place.labware, out[-1][1].wells, place.unknown)
        out.append((r.labware(place, p, doing, implicit=implicit, holding=beside(frame, p)), place))
    if doing == "pipette into":
        _copies_named(frame, [lw for lw, _ in out], p)
    return out


def _copies_named(frame: Frame, plates: list[str], p: r.Planning) -> None:
    """'Make two daughter plates from MP-07 onto DP-07a': as many plates as copies, or asked
    (one copy made of two asked for does less than asked)."""
    n = copies_said(frame.clause.said)
    named = list(dict.fromkeys(plates))
    if n is None or n == len(named):
        return
    empty = [
        lw
        for lw in r.work_plates(p.world)
        if not any(v > 0 for (lid, _), v in p.world.volume.items() if lid == lw)
    ]
    raise Ask(
        f"You ask for {n} copies but name {len(named)} plate(s) ({', '.join(named)}): "
        "which plates should receive them?",
        ["plate", "destination"],
        empty or r.work_plates(p.world),
    )
