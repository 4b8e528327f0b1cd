"""Facts about the lab checked against its state ("A1 already holds 200 uL of dye", "the
buffer is in reservoir A2", "plate_1 is in the reader", "dna_plate is empty").

A fact that agrees changes nothing but what later clauses may leave out: the wells it named
("add 100 uL buffer to it"), the liquid it named ("add 50 uL of it") and, for one well, the
source of that liquid ("lysate_block A1 holds lysate. Move 100 uL into read_96 A1"). A fact
that disagrees - another volume, another liquid, a liquid the lab does not have at all, a
plate said empty that is not - is asked about (``lab_state``): the planner never plans on
either version.
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._outcomes import Ask
from agents.task.planning._quantities import Quantity, fmt

_FLAGS = re.IGNORECASE
_EMPTY = re.compile(r"\b(?:is|are)\s+(?:still\s+|completely\s+|totally\s+|now\s+)?empty\b", _FLAGS)
# "..., then carry 100 uL along. Columns 2-12 already have 100 uL RPMI": how the lab was
# before the request, wherever the sentence stands (never the state the steps before leave)
_BEFORE = re.compile(
    r"\b(?:already|pre-?(?:filled|loaded|dispensed|plated|aliquoted)|beforehand)\b", _FLAGS
)


# "reservoir A2 is water", "A4 holds Coomassie", "res12 A5 has 5 mL of ethanol in it": the
# liquid a fact says a place holds, as written (the lab may not know the name at all).
_NAME = (
    r"(?P<name>(?:[A-Za-z]|\d+(?:\.\d+)?\s*[x%X]\s*)[\w%+-]*"
    r"(?:\s+(?!(?:in|on|at|per|each|already|now|there|from|for)\b)[A-Za-z0-9][\w%+-]*){0,2})"
)
_HOLDS = re.compile(
    r"(?:\b(?:is|are|holds?|contains?|has(?:\s+got)?|have)\b|=)\s*(?:(?:the|our|my|some|just|"
    r"only|pure)\s+)*(?:[\d.]+\s*(?:u[lL]|µ[lL]|m[lL])\s+(?:of\s+)?(?:the\s+)?)?"
    + _NAME
    + r"(?:\s+(?:in\s+(?:it|there|each|every|all)\b.*|already|per\s+well|each|now))?\W*$",
    _FLAGS,
)
# "the ethanol is in reservoir A1", "TE's in A1": a liquid named before where it is.
_IS_IN = re.compile(
    r"^(?:the\s+|our\s+|my\s+)?(?P<name>[A-Za-z][\w%+-]*(?:\s+[A-Za-z][\w%+-]*){0,2})"
    r"(?:\s+(?:is|are|sits?)|'s)\s+(?:(?:already|currently|now)\s+)?(?:in|at)\b",
    _FLAGS,
)
# Words a fact uses that are not liquids ("A1 is empty", "plate_1 is in the reader").
_NOT_LIQUID_TEXT = """
    empty full filled ready fine ok okay clean done there here in on at it that this same
    blank blanks control controls standard standards source destination dry loaded prefilled
    pre-filled sitting already now left untouched free available occupied used spent old new
    fresh cold warm sealed open closed a an the one two plate well wells reservoir trough
    nothing diluent diluents"""
_NOT_LIQUID = frozenset(_NOT_LIQUID_TEXT.split())


def said_liquid(frame: Frame, p: r.Planning) -> str | None:
    """The liquid a fact names that is none of the lab's ("reservoir A2 is water" where the
    lab has no water): a fact that cannot agree with the lab."""
    if frame.liquid is not None or frame.ents.liquids:
        return None
    m = _IS_IN.match(frame.text) or _HOLDS.search(frame.text)
    if m is None:
        return None
    name = m.group("name").strip()
    words = name.lower().split()
    if any(
        re.fullmatch(r"[\d.]+|u[lL]|m[lL]|about|approx\w*|around|roughly|nearly", w) for w in words
    ):
        return None  # "still has about 100 uL": a volume, not a liquid
    if words[0] in _NOT_LIQUID or any(w in _NOT_LIQUID for w in words[-1:]):
        return None
    if any(a <= m.start("name") < b for a, b in _named_spans(frame)):
        return None  # a plate or an instrument, not a liquid
    known = [k for k in (p.lex.liquid(name), p.lex.liquid(words[0])) if k is not None and k.sure]
    if known or any(w in n.lower().split() for n in p.world.liquids for w in words):
        return None  # the lab's liquid, perhaps shortened ("Bradford" for "Bradford reagent")
    return name


def _named_spans(frame: Frame) -> list[tuple[int, int]]:
    spans = [(x.start, x.end) for x in frame.ents.labware + frame.ents.unknown_labware]
    spans += [(a, b) for _, _, a, b in frame.ents.instruments]
    return spans


def check_fact(frame: Frame, p: r.Planning) -> str:
    """Check a fact against the lab; ask (``lab_state``) when they disagree."""
    world = p.world
    unknown = said_liquid(frame, p)
    checked: list[str] = []
    plate_named = [m.name for m in frame.ents.labware if m.sure]
    # "plate_1 is in the reader": a location.
    for kind, iid, _, _ in frame.ents.instruments:
        if plate_named and kind in ("plate_reader", "heater_shaker"):
            where = r.place_of(iid or r.instrument(kind, p, frame), world)
            plate = plate_named[0]
            if world.location[plate] != where:
                raise disagree(f"{plate} is at {where}", f"{plate} is at {world.location[plate]}")
            checked.append(f"{plate} is at {where}")
    volume = frame.volume or (frame.volumes[0] if frame.volumes else None)
    for m in frame.ents.labware:  # "dna_plate is empty": every well of it
        if m.sure and not any(pl.wells for _, pl in frame.places) and _EMPTY.search(frame.text):
            full = sorted(w for (lw, w), v in world.volume.items() if lw == m.name and v > 1e-6)
            if full:
                raise disagree(f"{m.name} is empty", f"{m.name} {full[0]} holds liquid")
            checked.append(f"{m.name} is empty")
    placed = [pl for _, pl in frame.places if pl.wells is not None]
    if volume is not None and not placed and len(plate_named) == 1 and not frame.ents.instruments:
        checked.append(_per_well(plate_named[0], volume.value, volume.text, frame, p))
    paired = len(frame.ents.liquids) == len(placed) > 1  # "water in A1 and the buffer in A2"
    for k, place in enumerate(placed):
        said = frame.ents.liquids[k] if paired else frame.liquid
        vols = [q for q in frame.ents.quantities if q.kind == "volume"]
        volume = vols[k] if len(vols) == len(placed) > 1 else _own(vols, placed, k, volume)
        sure = [m for m in frame.ents.labware if m.sure]
        if place.labware is None and place.unknown is None and len(sure) == 1:
            place = Place(sure[0], place.wells)  # "The reservoir has 12 mL of water in A1"
        plate = r.labware(place, p, "check", implicit=r.plates(world))
        wells = r.wells(place, plate, p, "do you mean", frame)
        liquid = r.liquid(said, p) if said else None
        for well in wells:
            have, contents = _held(world, plate, well, bool(_BEFORE.search(frame.text)))
            if _EMPTY.search(frame.text):
                if have > 1e-6:
                    raise disagree(
                        f"{plate} {well} is empty", f"it holds {fmt(round(have, 3), 'uL')}"
                    )
                continue
            if volume is not None and abs(have - volume.value) > 0.5:
                raise disagree(
                    f"{plate} {well} holds {volume.text}", f"it holds {fmt(round(have, 3), 'uL')}"
                )
            if liquid is not None and contents.get(liquid, 0) <= 0:
                held = ", ".join(contents) or "nothing"
                raise disagree(f"{plate} {well} holds {liquid}", f"it holds {held}")
            if unknown is not None:  # "reservoir A2 is water" in a lab with no water
                held = ", ".join(contents) or "nothing"
                raise disagree(
                    f"{plate} {well} holds {unknown}", f"the lab has no {unknown}; it holds {held}"
                )
            if liquid is None and volume is None and len(contents) == 1:
                p.liquid = next(
                    iter(contents)
                )  # "reservoir A2 is our buffer": take "it" from there
        kept = [k for k, v in world.contents.get((plate, wells[0]), {}).items() if v > 0]
        if len(wells) == 1 and len(kept) == 1:
            p.kept[kept[0]] = (plate, wells[0])  # "... Move 100 uL into read_96 A1": from here
        checked.append(f"{plate} {wells[0]}{'..' + wells[-1] if len(wells) > 1 else ''}")
        if p.head_dest is None or p.head_dest == plate:  # a heading's plate stays the plate
            p.plate, p.wells = plate, wells  # "... add 100 uL buffer to it"
    if frame.liquid is not None:
        liquid = r.liquid(frame.liquid, p)
        if plate_named and not any(
            lw == plate_named[0] for lw, _, _ in world.liquids.get(liquid, [])
        ):
            raise disagree(f"{liquid} is in {plate_named[0]}", f"{liquid} is not there")
        p.liquid = liquid  # "add 50 uL of it"
        if not checked:
            checked.append(f"{liquid} is in the lab")
    if not checked:
        checked.append("nothing to check against the lab")
    return "a fact, checked against the lab: " + "; ".join(checked) + " (agrees)"


def _held(world: r.World, plate: str, well: str, before: bool) -> tuple[float, dict[str, float]]:
    """What a well holds now, or (``before``: a fact said of the lab as it was) before any step."""
    if not before:
        return world.well_volume(plate, well), world.contents.get((plate, well), {})
    start = world.lab.labware[plate].wells.get(well)
    return (start.volume_ul, start.contents) if start is not None else (0.0, {})


def _own(
    vols: list[Quantity], placed: list[Place], k: int, shared: Quantity | None
) -> Quantity | None:
    """The volume said for the k-th place: the one written between it and the place before
    ("100 uL buffer in columns 2-12 and the stock in column 1": none for column 1), or the one
    said after all of them ("A1 and plate_2 A1 hold 100 uL")."""
    ends = [pl.wells.end if pl.wells is not None else 0 for pl in placed]
    if len(placed) < 2 or not vols or all(q.start >= ends[-1] for q in vols):
        return shared
    inside = [q for q in vols if (ends[k - 1] if k else 0) <= q.start < ends[k]]
    return inside[0] if inside else None


def _per_well(plate: str, volume: float, text: str, frame: Frame, p: r.Planning) -> str:
    """ "cell_plate currently holds 200 uL per well": every well that holds something (of the
    liquid said, when one is) holds that much."""
    world = p.world
    said = r.liquid(frame.liquid, p) if frame.liquid is not None else None
    filled = {
        w: v
        for (lw, w), v in world.volume.items()
        if lw == plate and v > 1e-6 and (said is None or world.contents[lw, w].get(said, 0) > 0)
    }
    if not filled:
        raise disagree(f"{plate} holds {text} a well", f"{plate} holds nothing there")
    for well in sorted(filled, key=lambda w: (w[0], int(w[1:]))):
        if abs(filled[well] - volume) > 0.5:
            raise disagree(
                f"{plate} holds {text} a well",
                f"{plate} {well} holds {fmt(round(filled[well], 3), 'uL')}",
            )
    p.plate, p.wells = plate, sorted(filled, key=lambda w: (int(w[1:]), w[0]))
    return f"{plate}: {len(filled)} wells of {text}"


def disagree(said: str, lab: str) -> Ask:
    return Ask(
        f"You say {said}, but the lab state says {lab}. Which is right? Correct the lab state "
        "(read the instrument back) or the request.",
        ["lab_state"],
        [f"the lab state: {lab}", f"the request: {said}"],
    )
