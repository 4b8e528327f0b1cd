"""Move a plate: to an instrument (the reader, the heater-shaker), a workspace place of the
plate mover (``hotel:1``), or back to its deck slot."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning.families import Family
from agents.task.planning.families._amounts import WHOLE

_FLAGS = re.IGNORECASE
_VERB = re.compile(
    r"^(?:move|bring|take|put|place|return|send|carry|transport|relocate|park|store|load|stash"
    r"|stow|shift|transfer|unload|eject|pop|stick|slide)\b",
    _FLAGS,
)
# "get X off the deck", "grab X from the reader": a move only when the clause says no more
# (no amount, no setting: "get me the OD450 of X" is a read)
_WEAK_VERB = re.compile(r"^(?:get|grab|fetch|pull|lift)\b", _FLAGS)
_TO = re.compile(r"(?:\b(?:back\s+to|to|into|onto|on|in|back)\b|->)(.*)$", _FLAGS)
_HOME = re.compile(
    r"^(?:(?:the|its|their)\s+)?(?:home|deck|deck slot|slot|place|(?:original\s+)?spot"
    r"|original\s+(?:slot|position|place)"
    r"|liquid handler|lh|robot)?$",
    _FLAGS,
)
_SLOT = re.compile(
    r"^(?:the\s+)?([a-z][\w\-]*)\s*,?\s*(?:slot|position|pos\.?|shelf|no\.?|number|#|:)?\s*(\d+)$",
    _FLAGS,
)


_BARE_PLACE = re.compile(r"^\s*(?:the\s+)?hotel\s+#?\d+\s*$", _FLAGS)
_ALL_PLATES = re.compile(r"\b(?:all|every|each)\s+(?:of\s+)?(?:the\s+)?plates?\b", _FLAGS)


# "Stamp: src -> dst", "src -> dst, same layout": a plate's liquid copied, not the plate moved
_COPY_CUE = re.compile(
    r"\b(?:stamp\w*|replica\w*|replicate|cop(?:y|ies)|daughter|reformat\w*|same\s+(?:layout|wells?"
    r"|positions?)|well[\s-]+(?:to|for)[\s-]+well|corresponding|matching)\b",
    _FLAGS,
)


# What a moved plate's object says when it names no plate id ("put it on the shaker")
_PLATE_WORD = re.compile(r"\b(?:it|them|plates?|blocks?|both|all|everything|lids?)\b", _FLAGS)


def _puts_something_in(ents: Entities) -> bool:
    """Whether the clause puts an unnamed thing into a plate it names only as the place
    ("put the stop solution in P row A"): every plate comes after the 'in', and what is put
    is no plate."""
    verb = _VERB.match(ents.text)
    to = _TO.search(ents.text, verb.end()) if verb else None
    if verb is None or to is None or not ents.labware:
        return False
    said = ents.text[verb.end() : to.start()]
    return (
        all(m.start >= to.start() for m in ents.labware)
        and bool(said.strip())
        and not _PLATE_WORD.search(said)
        and not ents.instruments
    )


def _put_to(rest: str, instruments: list[tuple[str, str, int, int]]) -> bool:
    """What follows a plate that opens a clause sends it somewhere: "-> hotel 3", "to the
    reader", or "on the shaker" / "in the reader" when an instrument is what it is on or in."""
    if re.match(r"\s*(?:->|to|into|onto)\s+\S", rest, _FLAGS):
        return True
    return bool(instruments) and bool(re.match(r"\s*(?:on|in)\s+(?:the\s+)?\S", rest, _FLAGS))


def detect(clause: Clause, ents: Entities) -> int | None:
    if clause.heading and re.search(r"\bfrom\s+\S+.*\b(?:to|into)\b", ents.text, _FLAGS):
        return None  # "Transfer from dna_plate to dest_plate (same wells):" + items: liquid
    if _VERB.match(ents.text) and not (ents.volumes() or ents.liquids or WHOLE.search(ents.text)):
        if (ents.wellsets and re.match(r"transfer\b", ents.text, _FLAGS)) or len(ents.wellsets) > 1:
            return None  # "transfer A1 to B1", "move src row A to P row A": how much?
        if _puts_something_in(ents):
            return None  # "put the stop solution in P row A": a liquid the lab may not name
        return 45
    if (
        (_VERB.match(ents.text) or _WEAK_VERB.match(ents.text))
        and ents.liquids
        and not (ents.volumes() or ents.wellsets or ents.labware or WHOLE.search(ents.text))
        and (ents.instruments or re.search(r"\bhotel\b", ents.text, _FLAGS))
    ):
        return 45  # "move the cells to the reader": the plate that holds them
    if (
        _WEAK_VERB.match(ents.text)
        and ents.labware
        and not (ents.quantities or ents.liquids or ents.wellsets)
    ):
        return 40
    if (
        ents.labware
        and ents.labware[0].start == 0
        and _put_to(ents.text[ents.labware[0].end :], ents.instruments)
        and not ents.volumes()
        and not ents.liquids
        and not ents.wellsets
        and not _COPY_CUE.search(f"{clause.label or ''} {ents.text}")
    ):
        return 40  # "elisa_plate to hotel 3, plate_2 to hotel 1"
    return None


def destination(
    text: str, plate: str, frame: Frame, p: r.Planning, at: int = 0, until: int | None = None
) -> str:
    """The location a move phrase names (``text`` starts at ``at`` in the clause)."""
    world = p.world
    spot = text.strip().strip(".")
    if _HOME.match(spot):
        return world.labware(plate).home
    exact = {x.lower(): x for x in world.lab.mover_locations}
    if spot.lower() in exact:
        return exact[spot.lower()]  # "lh:platecar:4": a place by its own name
    for kind, iid, start, _ in frame.ents.instruments:
        if start < at or (until is not None and start >= until):
            continue  # "from the deck to the reader": only what follows "to" is the place
        if kind in ("plate_reader", "heater_shaker", "thermocycler"):
            return r.place_of(iid or r.instrument(kind, p, frame), world)
        if kind == "liquid_handler":
            return world.labware(plate).home
        if kind == "plate_mover":
            continue
        r.instrument(kind, p, frame)  # refuses: the lab has none
    places = world.lab.mover_locations
    by_name = {x.lower(): x for x in places}
    low = re.sub(r"^the\s+", "", spot.lower())
    if low in by_name:
        return by_name[low]
    if (m := _SLOT.match(spot)) and f"{m.group(1)}:{m.group(2)}".lower() in by_name:
        return by_name[f"{m.group(1)}:{m.group(2)}".lower()]
    if where := _numbered(low, by_name):
        return where  # "hotel position #2", "slot 3 of the hotel", "the 2nd hotel slot"
    group = [x for x in places if x.lower().startswith(low.split()[0] + ":")] if low else []
    free = [x for x in group if world.occupant(x) is None] or group
    options = free or places
    question = (
        f"Which {low} slot should {plate} go to?"
        if group
        else f"Where should {plate} go? '{spot}' is not a place I know."
    )
    raise Ask(question, ["location"], options)


def _numbered(spot: str, by_name: dict[str, str]) -> str | None:
    """A numbered place of a group named anywhere in ``spot`` ("shelf 2 of the hotel")."""
    numbers = re.findall(r"(?<![\w.])#?\s*(\d{1,2})(?:st|nd|rd|th)?\b", spot)
    groups = {k.split(":")[0] for k in by_name if re.fullmatch(r"[a-z][\w-]*:\d+", k)}
    named = [g for g in groups if re.search(rf"\b{re.escape(g)}\b", spot)]
    if len(numbers) == 1 and len(named) == 1:
        return by_name.get(f"{named[0]}:{numbers[0]}")
    return None


def build(frame: Frame, p: r.Planning) -> str:
    world = p.world
    world.arm()  # refuses at once in a lab without a plate mover
    plates = [m.name for m in frame.ents.labware if m.sure]
    if not plates and _ALL_PLATES.search(frame.text):  # "return all plates to the deck"
        plates = [lw for lw in r.work_plates(world) if world.location[lw] != world.labware(lw).home]
        plates = plates or r.work_plates(world)
    if not plates:
        held = frame.ents.liquids[0].name if frame.ents.liquids else None
        plates = [r.labware(frame.head, p, "move", implicit=r.plates(world), holding=held)]
    text = frame.text
    last = max((m.end for m in frame.ents.labware), default=0)
    m = _TO.search(
        re.sub(
            r"\bfrom\s+(?:the\s+)?\w+(?:\s+\w+)?\s+(?=to\b)",
            lambda x: " " * len(x.group(0)),
            text[last:],
        )
    )
    if m is None and _BARE_PLACE.match(text[last:]):
        m = re.match(r"\s*(.*)$", text[last:])  # "..., then hotel 2": the place alone
    if m is None and re.search(r"\b(?:home|back)\b", text[last:], _FLAGS):
        m = re.search(r"()$", text)  # "send it home", "put it back": its home
    if m is None:
        raise Ask(f"Where should {plates[0]} go?", ["location"], world.lab.mover_locations)
    done = []
    own = _own_destinations(frame)
    for plate in dict.fromkeys(plates):
        if world.labware(plate).kind != "plate":
            raise Refuse(f"{plate} is a tip rack; the plate mover moves plates only", "unsafe")
        if plate in own:  # "elisa_plate into hotel 1 and plate_2 onto the heater-shaker"
            where = destination(own[plate][0], plate, frame, p, own[plate][1], own[plate][2])
        else:  # "put them back in the hotel": the place after "back in"
            said = re.sub(r"^\s*(?:in|into|on|onto|to)\b", "", m.group(1), flags=_FLAGS)
            where = destination(said, plate, frame, p, last + m.start(1))
        if world.location[plate] == where:
            done.append(f"{plate} is already at {where}")
            continue
        world.bring(plate, where)
        done.append(f"{plate} to {where}")
        p.plate = plate
    return "move " + ", ".join(done)


def _own_destinations(frame: Frame) -> dict[str, tuple[str, int, int]]:
    """Each plate's own place when every plate named is followed by one ("A to X and B to
    Y"): plate -> (place phrase, where it starts in the clause)."""
    sure = [m for m in frame.ents.labware if m.sure]
    if len(sure) < 2:
        return {}
    out: dict[str, tuple[str, int, int]] = {}
    for i, m in enumerate(sure):
        end = sure[i + 1].start if i + 1 < len(sure) else len(frame.text)
        seg = re.sub(r"\s*(?:,|;|\band\b)\s*$", "", frame.text[m.end : end])
        seg = re.sub(r"\b(?:off|from)\s+the\s+\w+\s+", lambda x: " " * len(x.group(0)), seg)
        to = _TO.search(seg)
        if to is None:
            return {}
        out[m.name] = (to.group(1), m.end + to.start(1), end)
    return out


FAMILY = Family("move", detect, build)
