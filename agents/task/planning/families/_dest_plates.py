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

_KINDS = r"other|remaining|empty|fresh|new|clean|blank|unused|spare|daughter|destination"
# what the plate is: "384", "96-well", "deep-well", "PCR", "2 mL" (a filter on those that fit)
_SHAPE = r"(?:\d{2,4}(?:[\s-]?well)?|deep[\s-]?well|pcr|\d+(?:\.\d+)?\s*ml)"
_FRESH = re.compile(
    r"(?:\b(?:an?|the|one)\s+|(?:->|→|=>|\b(?:to|into|onto))\s*)"  # "-> new plate"
    r"(?:empty|fresh|new|clean|blank|unused|spare|other|second|daughter|replica|copy"
    r"|destination|target|receiving|recipient|assay)\s+"  # a role: the one empty plate that fits
    rf"(?P<shape>(?:{_SHAPE}[\s-]+)?)(?:[\w-]+\s+)?(?:plate|block)\b",
    _FLAGS,
)
# "both empty plates", "the other two plates", "two fresh daughter plates", "the empty plates"
_FRESH_MANY = re.compile(
    r"\b(?:(?P<both>both)\s+(?:of\s+)?(?:the\s+)?|(?:all\s+(?:of\s+)?)?the\s+|all\s+)?"
    r"(?:(?P<pre>other|remaining)\s+)?(?:(?P<n>two|three|four|[2-4])\s+)?"
    rf"(?P<kind>(?:(?:{_KINDS})[\s-]+){{0,2}})(?P<shape>(?:{_SHAPE}[\s-]+)?)"
    r"(?:daughter\s+)?(?:plates|blocks)\b",
    _FLAGS,
)
_COUNTS = {"two": 2, "three": 3, "four": 4}
_FRESH_WORDS = re.compile(r"empty|fresh|new|clean|blank|unused|spare|daughter", _FLAGS)


def _of_shape(plates: list[str], said: str, p: r.Planning) -> list[str]:
    """The plates that are what ``said`` says they are ("384", "deep-well", "block")."""
    kinds = p.lex.lab.labware
    said = said.lower()
    if m := re.search(r"(\d{2,4})(?:[\s-]?well)?\b(?!\s*ml)", said):
        plates = [lw for lw in plates if kinds[lw].rows * kinds[lw].cols == int(m.group(1))]
    if re.search(r"deep[\s-]?well|block|\bml\b", said):
        plates = [lw for lw in plates if kinds[lw].well_max_volume_ul >= 1000]
    if "pcr" in said:  # a PCR plate: said so, or its wells hold 250 uL or less
        plates = [lw for lw in plates if _pcr(lw, kinds[lw].type, kinds[lw].well_max_volume_ul)]
    shallow = [lw for lw in plates if kinds[lw].well_max_volume_ul < 1000]
    if len(plates) > 1 and len(shallow) == 1 and re.search(r"\bplate\s*$", said):
        plates = shallow  # "the empty 96-well plate": the plate, not the deep-well block
    return plates


def _pcr(name: str, kind: str, well_ul: float) -> bool:
    """A PCR plate: its id or type says so, or its wells hold 250 uL or less."""
    return "pcr" in f"{name} {kind}".lower() or well_ul <= 250


def _many(
    frame: Frame, options: list[str], p: r.Planning, sources: list[str]
) -> list[Place] | None:
    """ "Onto both empty plates", "into the other two plates": every plate that fits - the empty
    ones (or, for "other", every one not a source) - when as many fit as were said and all are
    of the source's format; else asked offering those that fit (None: no such words)."""
    m = next((m for m in _FRESH_MANY.finditer(frame.text) if m["pre"] or m["kind"]), None)
    copies = copies_said(frame.clause.said)  # "make two daughter plates of X": new ones
    if m is None and copies is None:
        return None
    said = f"{m['pre'] or ''} {m['kind']}" if m else "daughter"
    fits = (
        [lw for lw in options if p.world.holds_nothing(lw)]
        if _FRESH_WORDS.search(said)
        else options
    )
    n: int | None = copies
    if m is not None:
        fits = _of_shape(fits, m.group(0), p)
        n = 2 if m["both"] else (_COUNTS.get(m["n"].lower()) or int(m["n"])) if m["n"] else None
    kinds = p.lex.lab.labware
    if sources and n is not None and len(fits) != n:  # a 384's copies: no 96 can take them
        size = kinds[sources[0]].rows * kinds[sources[0]].cols
        room = [  # "both daughter plates": the ones of the source's format
            lw
            for lw in fits
            if kinds[lw].rows * kinds[lw].cols == size
            or (m is None and kinds[lw].rows * kinds[lw].cols > size)
        ]
        fits = room if len(room) == n else fits
    formats = {kinds[lw].rows * kinds[lw].cols for lw in [*fits, *sources[:1]]}
    if len(fits) >= 2 and n in (None, len(fits)) and len(formats) == 1:
        return [Place(Mention(lw, 0, 0, lw, True)) for lw in fits]
    return None  # not decided here: named daughters, else asked below


def _unnamed_destination(frame: Frame, p: r.Planning, sources: list[str]) -> list[Place]:
    """A destination said without its name: "onto the empty plate" (or "the other plate") is
    the one work plate that fits - holding nothing, and not a source; else it is asked,
    offering the plates it could be (never the source itself)."""
    world = p.world
    options = [lw for lw in r.work_plates(world) if lw not in sources] or r.work_plates(world)
    if (many := _many(frame, options, p, sources)) is not None:
        return many
    said = _FRESH.search(frame.text) or _FRESH.search(frame.clause.said)  # "a daughter plate of"
    fresh = said is not None
    phrase = said.group(0) if said is not None else ""
    kind = re.search(rf"\b(?:{_KINDS}|second|replica)\b.*", phrase, _FLAGS)
    key = kind.group(0).lower() if kind and re.search(r"\bthe\s", phrase, _FLAGS) else ""
    if key in p.fresh:  # "... into the new plate, then add buffer to the new plate": the same
        return [Place(Mention(p.fresh[key], 0, 0, p.fresh[key], True))]
    if said is not None:  # (never the plate just worked on: its moves may not be on the world yet)
        other = [lw for lw in options if lw != p.plate]
        empty = [lw for lw in other if world.holds_nothing(lw)]
        fits = other if re.search(r"\bother\b", frame.text, _FLAGS) else empty
        fits = _of_shape(fits, said.group(0), p)
        if len(fits) == 1:
            if key and not re.search(r"\bother\b", key):
                p.fresh[key] = fits[0]
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
    empty = [lw for lw in r.work_plates(p.world) if p.world.holds_nothing(lw)]
    raise Ask(
        f"You ask for {n} copies but name {len(named)} plate(s) ({', '.join(named)}): "
        "which plates should receive them?",
        ["plate", "destination"],
        empty or r.work_plates(p.world),
    )
