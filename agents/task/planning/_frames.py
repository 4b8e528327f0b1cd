"""Stage 4 of the rule planner: one semantic frame per clause.

A frame says what a clause asks for, in slots: the action (its family), the liquid, the source
and the destination (a labware and a well set each), the volume per well or in total, the tip
policy, the channels, mixing, a fold or a ratio, a final volume, a temperature, a duration, a
speed, wavelengths. Slots stay as written (a well set is not yet expanded, a liquid not yet
located): whether they exist, fit and suffice is for the builders.

Roles come from the words before an entity: what follows "from" is a source, what follows
"to", "into", "across", "down" ... a destination, what comes before both is the verb's object
(a source for "pool A1:A6 into B1", a destination for "fill row B with buffer").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from agents.task.planning._bracket_places import dest_in_brackets, source_in_brackets
from agents.task.planning._clauses import Clause
from agents.task.planning._described import described_liquids, only_receive
from agents.task.planning._entities import Entities
from agents.task.planning._labels import diluent_of
from agents.task.planning._lexicon import Mention
from agents.task.planning._located import kept_in, located_cuts, places_after
from agents.task.planning._quantities import Quantity
from agents.task.planning._volume_slots import assign_quantities
from agents.task.planning._wellsets import WellSet

_FLAGS = re.IGNORECASE
# "starting from B3" says where a run of wells begins, not where liquid comes from
_FROM = re.compile(
    r"(?<!starting\s)(?<!beginning\s)\b(?:from|out\s+of|off)\b"
    # "(use the 12-channel reservoir)": a trough said to use is where the liquid comes from
    r"|\b(?:use|using)(?=\s+(?:the\s+)?(?:[\w-]+\s+){0,2}(?:reservoirs?|troughs?)(?:[_-]?\w+)?\b)",
    _FLAGS,
)
_TO = re.compile(
    r"\b(?:to|into|onto|in|across|down|over|throughout|along|among|amongst|between|on|at)\b|->",
    _FLAGS,
)
# "to" that is not a destination: ranges, final volumes, "up to", "in triplicate", ...
_NOT_TO = re.compile(
    r"(?:\bto\s+(?:re-?array|cherry[\s-]?pick|hit[\s-]?pick|pick|transfer|pool|stamp|copy|spot|be)\b"
    r"|\bup\s+to\b|\bto\s+(?:a\s+)?(?:final|total)\b|\bto\s+(?:a\s+)?\d|\bin\s+(?:a\s+)?\d+(?:\.\d+)?\s*(?:u|m)l"
    r"|\bin\s+(?:duplicate|triplicate|quadruplicate|total|buffer|diluent)|\bat\s+\d|\bon\s+(?:the\s+)?"
    r"(?:8|eight|multi|single)|\bin\s+(?:rows?|columns?)\s+\w+\s+and\b|\bwells?\s+(?:in|of|on)\b"
    r"|(?<!from\s)\b[A-Pa-p]\d{1,2}\s+(?:to|through|thru)\s+[A-Pa-p]\d{1,2}\b(?!\s*[:\-]\s*[A-Pa-p]\d)"
    r"|\brows?\s+[A-Pa-p]\s+(?:to|through|thru)\s+(?:rows?\s+)?[A-Pa-p]\b"
    r"|\b(?:columns?|cols?)\s+\d{1,2}\s+(?:to|through|thru)\s+(?:columns?\s+|cols?\s+)?\d{1,2}\b)",
    _FLAGS,
)
# "from D1 to D6 into ...": with a destination after it, "D1 to D6" is a range of sources.
_DEST_AFTER = re.compile(r"\b(?:into|onto)\b|->", _FLAGS)
_FROM_RANGE = re.compile(
    r"\bfrom\s+([A-Pa-p]\d{1,2}\s+(?:to|through|thru)\s+[A-Pa-p]\d{1,2})\b(?=.*(?:\b(?:into|onto)\b|->))",
    _FLAGS,
)
# "to plate_1 from A1 to A6 (inclusive)": after a destination, "from W to W" is where it goes,
# a range of destinations, when nothing after it names another destination.
_SPAN_TO = r"\s*(?:to|through|thru|till|until|-|–)\s*"
_DEST_SPAN = re.compile(
    rf"\bfrom\s+([A-Pa-p]\d{{1,2}}{_SPAN_TO}[A-Pa-p]\d{{1,2}}"
    rf"|(?:columns?|cols?)\.?\s*\d{{1,2}}{_SPAN_TO}(?:(?:columns?|cols?)\.?\s*)?\d{{1,2}}"
    rf"|rows?\s+[A-Pa-p]{_SPAN_TO}(?:rows?\s+)?[A-Pa-p])\b"
    r"(?!.*(?:\b(?:into|onto)\b|->))",
    _FLAGS,
)  # ... and "to every well of od_plate from column 1 to column 4": the columns it goes to
_TO_BEFORE = re.compile(r"\b(?:to|into|onto)\s+(?!(?:a\s+)?(?:final|total)\b)\S", _FLAGS)
# A "from" with no destination word after it: the next "W to W" goes from a source to a well.
_SOURCE_THEN_DEST = re.compile(r"\bfrom\b(?!.*\b(?:to|into|onto)\b)[^,;]*$", _FLAGS)
# "A1 in quadruplicate (A1-A4)", "to dest_plate in triplicate (rows A, B and C)": the layout.
_LAYOUT = re.compile(
    r"\s*(?:,\s*)?in\s+(?:duplicate|triplicate|quadruplicate)s?\s*\(\s*(?:i\.e\.?,?\s*)?", _FLAGS
)
_WHOLE = (  # "A1-P1 (every row of column 1)", "(all of row A)", "i.e. the whole first column"
    r"(?:(?:all|every\s+(?:well|row|column)|(?:the\s+)?(?:whole|entire|full))"
    r"\s+(?:of\s+|in\s+)?(?:the\s+)?)"
)
# "I1-I12 (the bottom row)", "A1-H1, i.e. column 1", "row H - the bottom row": one set of
# wells said twice, never two sets (the two must agree: _wellsets checks it).
_RESTATED_IN = re.compile(
    # "each well of P that got TMB (A1-A12)": a short relative clause may come before it
    r"\s*(?:(?:that|which)\s+(?:got|received|gets|have|has|had|contain|hold)s?\b[^(),;]{1,40}?)?"
    r"\s*(?:only\s*)?[(\[]\s*(?:(?:i\.?e\.?|that\s+is|aka|a\.k\.a\.?|namely|so|=)\s*,?\s*)?"
    rf"{_WHOLE}?",
    _FLAGS,
)
# "every well of the black 384 plate": a word for how a plate looks before its shape's name
_LOOKS = (
    r"(?:(?:black|white|clear|opaque|solid|empty|new|fresh|sterile|low[\s-]volume|half[\s-]area)"
    r"\s+)?"
)
_RESTATED = re.compile(
    r"\s+[-–—]\s+(?:(?:i\.?e\.?|that\s+is|namely)\b\.?,?\s*)?|\s*,?\s*(?:i\.?e\.?|that\s+is"
    rf"|namely|aka|a\.k\.a\.?)(?:\b|(?<=\.))\.?,?\s*{_WHOLE}?",
    _FLAGS,
)
# "B2-G11 (inner wells)", "(the inner 60 only)": the bracket of a restated set closes
_CLOSES = re.compile(r"\s*(?:,\s*\d{1,3}\s+wells|only|alone)?\s*[)\]]", _FLAGS)


@dataclass
class Place:
    """A labware and a well set as one role of a clause names them."""

    labware: Mention | None = None
    wells: WellSet | None = None
    unknown: Mention | None = None

    @property
    def empty(self) -> bool:
        return self.labware is None and self.wells is None and self.unknown is None


@dataclass
class Frame:
    """What one clause asks for, slot by slot, as written."""

    clause: Clause
    ents: Entities
    family: str
    liquid: Mention | None = None
    liquids: list[Mention] = field(default_factory=list)
    source: Place = field(default_factory=Place)
    dest: Place = field(default_factory=Place)
    head: Place = field(default_factory=Place)
    places: list[tuple[str, Place]] = field(default_factory=list)
    volume: Quantity | None = None
    total: Quantity | None = None
    final: Quantity | None = None
    mix_volume: Quantity | None = None
    volumes: list[Quantity] = field(default_factory=list)
    temperature: Quantity | None = None
    duration: Quantity | None = None
    speed: Quantity | None = None
    wavelengths: list[Quantity] = field(default_factory=list)
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.ents.text


_AFTER_NAME = re.compile(
    r"\s*(?:(?:samples?|librar(?:y|ies)|extracts?|reactions?|aliquots?)\s+)?"
    r"(?:that\s+(?:is|are)\s+|which\s+(?:is|are)\s+)?",
    _FLAGS,
)
_EACH_OF = re.compile(r"\bof\s+(?:each|every|all(?:\s+the)?)\s+$", _FLAGS)


def _role_cuts(text: str, liquids: list[Mention]) -> list[tuple[int, str]]:
    """(position, role) where each role segment of the clause starts ("the dye in reservoir
    A1": "in" right after a liquid's name says where it is, a source)."""
    cuts: list[tuple[int, str]] = []
    spans = [m.span(1) for m in _DEST_SPAN.finditer(text) if _TO_BEFORE.search(text[: m.start()])]
    for m in _FROM.finditer(text):
        if not any(a == m.end() + 1 for a, _ in spans):
            cuts.append((m.end(), "source"))
    blocked = [
        (m.start(), m.end())
        for m in _NOT_TO.finditer(text)
        if not _SOURCE_THEN_DEST.search(text[: m.start()])  # "from reservoir A1 to A5"
        or not re.match(r"[A-Pa-p]\d", m.group(0))
        or _DEST_AFTER.search(text[m.end() :])  # "from samples D1 to D6 into dest_plate D12"
    ]
    blocked += [(m.start(1), m.end(1)) for m in _FROM_RANGE.finditer(text)] + spans
    dests = [m for m in _TO.finditer(text) if not any(a <= m.start() < b for a, b in blocked)]
    for i, m in enumerate(dests):
        after = [
            q
            for q in liquids
            if _AFTER_NAME.fullmatch(text[q.end : m.start()])  # "every DNA sample in column 4"
        ]
        located = (
            m.group(0).lower() in ("in", "at", "on")
            and bool(after)
            # ... and a destination after it ("to plate_1", "on qc_96"), or the liquid is
            # taken from each of its wells ("pool 5 uL of each cDNA in column 1")
            and (  # (not "in wells H2-H8 on plate_1": that "on" only says whose wells)
                any(
                    d.group(0).lower() not in ("in", "at")
                    for d in places_after(dests[i + 1 :], m, text)
                )
                or any(_EACH_OF.search(text[: q.start]) for q in after)
            )
        )
        located = (
            located
            or (m.group(0).lower() == "in" and kept_in(text, m.start(), liquids, after))
            or (  # "spot 2 uL of the isolates in X column 5 onto Y": a noun
                i == 0  # the lab does not name, then where it is and where it goes
                and m.group(0).lower() == "in"
                and not cuts
                and bool(_NOUN_BEFORE.search(text[: m.start()]))
                and any(d.group(0).lower() in ("into", "onto", "to", "->") for d in dests[i + 1 :])
            )
        )
        cuts.append((m.end(), "source" if located else "dest"))
    return sorted(cuts + located_cuts(text, liquids))


# "2 uL of the isolates", "each strain", "all 8 mutants": what is taken, said as a noun, no well
_NOUN_BEFORE = re.compile(
    r"(?:\d\s*(?:u[lL]|m[lL])\s+of|\b(?:each|every|all))\s+(?:of\s+)?(?:the\s+)?(?:\d+\s+)?"
    r"(?![A-Pa-p]\d{1,2}\b)[A-Za-z][\w-]*(?:\s+(?![A-Pa-p]\d{1,2}\b)[A-Za-z][\w-]*)?\s*$",
    _FLAGS,
)  # "dilution of the cDNA in cDNA_plate H1"


def role_at(cuts: list[tuple[int, str]], pos: int) -> str:
    role = "head"
    for at, name in cuts:
        if at <= pos:
            role = name
    return role


def _generic(wells: WellSet) -> bool:
    """The whole plate ("each well", "all wells"), before a narrower set says which."""
    return len(wells.parts) == 1 and wells.parts[0].kind == "all"


# "5 uL of amplicons cols 1 and 2": an amount of a plate's wells is taken from them
_AMOUNT_OF = re.compile(r"\d\s*(?:u[lL]|m[lL])\s+of\s+(?:the\s+)?$")
_BRACKET = re.compile(r"\s*\(([^()]{1,60})\)")


def _located_in_brackets(frame: Frame) -> list[tuple[int, str]]:
    """ "2 uL backbone (parts_plt col 4) -> same wells": a plate in brackets right after a
    liquid says where that liquid is (a source), and the clause goes on as before them."""
    ents, text = frame.ents, frame.ents.text
    cuts: list[tuple[int, str]] = []
    for q in ents.liquids:
        m = _BRACKET.match(text, q.end)
        if m is None or not any(m.start(1) <= lw.start < m.end(1) for lw in ents.labware):
            continue
        said = list(m.group(1))  # only a place: "(parts_plt col 4)", not "(std_curve, 2 reps)"
        for a, b in [(x.start, x.end) for x in ents.labware] + [
            (w.start, w.end) for w in ents.wellsets
        ]:
            for i in range(max(a, m.start(1)), min(b, m.end(1))):
                said[i - m.start(1)] = " "
        if not re.sub(
            r"[\W_]+|\b(?:the|of|in|on|at|plate|wells?)\b", "", "".join(said), flags=_FLAGS
        ):
            before = role_at(_role_cuts(text, ents.liquids), q.start)
            cuts += [(m.start(1), "source"), (m.end(), before)]
    return cuts


def assign_places(frame: Frame) -> None:
    """Group labware and well sets into places, each with the role of its segment."""
    ents, text = frame.ents, frame.ents.text
    cuts = _role_cuts(text, ents.liquids) + _located_in_brackets(frame)
    cuts += dest_in_brackets(ents, cuts)  # "src A1 in triplicate (dst A1, A2, A3)"
    cuts += source_in_brackets(ents, cuts)  # "onto dst A1-A6 (src A1-A6)"
    cuts += [(m.start, "source") for m in ents.labware if _AMOUNT_OF.search(text[: m.start])]
    cuts.sort()
    items: list[tuple[int, int, str, object]] = []
    for m in ents.labware:
        items.append((m.start, m.end, "labware", m))
    for m in ents.unknown_labware:
        items.append((m.start, m.end, "unknown", m))
    for w in ents.wellsets:
        items.append((w.start, w.end, "wells", w))
    items.sort(key=lambda i: i[0])
    places: list[tuple[str, Place, int]] = []
    for start, end, what, obj in items:
        role = role_at(cuts, start)
        # "A1 of plate_1", "plate_1 A1", "A1 on plate_1": a well set and a labware next to
        # each other (same role, only a few joining words between) are one place.
        joined = False
        if places:
            last_role, last, last_end = places[-1]
            between = text[last_end:start]
            if (
                what == "wells"
                and last.wells is not None
                and (
                    (_RESTATED_IN.fullmatch(between) and _CLOSES.match(text[end:]))
                    or _RESTATED.fullmatch(between)
                )
            ) or (
                what == "wells"
                and (last.wells is not None or last.labware is not None)
                and _LAYOUT.fullmatch(between)
                and re.match(r"\s*\)", text[end:])
            ):
                # "every other well of row C (C2, C4 ... C12)": the wells spelled out win,
                # and must be the wells said before them ("I1-I12 (the bottom row)": asked)
                restated = last.wells if what == "wells" and last.wells is not None else None
                if restated is not None and not _LAYOUT.fullmatch(between):
                    obj = replace(obj, restates=restated)  # type: ignore[type-var]
                last.wells = obj  # type: ignore[assignment]
                places[-1] = (last_role, last, end)
                continue
            near = re.fullmatch(
                r"\s*\(?\s*(?:of|on|in|from|at|'s|,)?\s*(?:the\s+)?" + _LOOKS + r"(?:wells?\s+)?",
                between,
                _FLAGS,
            )
            if near and (last_role == role or re.search(r"\b(?:of|on|in|at)\b|'s", between)):
                if what == "wells" and last.wells is None:
                    last.wells, joined = obj, True  # type: ignore[assignment]
                elif (
                    what == "wells"
                    and last.wells is not None
                    and _generic(last.wells)
                    and (last_role == role or re.fullmatch(r"\s*(?:in|of)\s+(?:the\s+)?", between))
                ):
                    # "each well of libs row A", "each well of X in column 1": the row narrows
                    last.wells, joined = obj, True  # type: ignore[assignment]
                elif what == "labware" and last.labware is None and last.unknown is None:
                    last.labware, joined = obj, True  # type: ignore[assignment]
                elif (
                    what == "labware" and last.labware is not None and last.labware.name == obj.name  # type: ignore[attr-defined]
                ):
                    joined = True  # "the compound block of the master plate": one plate, twice
                elif what == "unknown" and last.labware is None and last.unknown is None:
                    last.unknown, joined = obj, True  # type: ignore[assignment]
        if joined:  # a plate named inside the wells' words ("every 2nd row of P, column 1")
            places[-1] = (places[-1][0], places[-1][1], max(end, places[-1][2]))
            continue
        place = Place()
        if what == "wells":
            place.wells = obj  # type: ignore[assignment]
        elif what == "labware":
            place.labware = obj  # type: ignore[assignment]
        else:
            place.unknown = obj  # type: ignore[assignment]
        places.append((role, place, end))
    frame.places = _pair_after_lead([(role, p) for role, p, _ in places], text)
    for role, place in frame.places:
        slot = getattr(frame, role)
        if slot.empty:
            setattr(frame, role, place)


_LEAD_END = re.compile(r"(?:[:;,(]|\s[-–—])\s*$")
_PAIR_JOIN = re.compile(r"\s*(?:->|to|into|onto)\s+(?:the\s+)?", _FLAGS)


def _span(place: Place) -> tuple[int, int]:
    said = [x for x in (place.labware, place.wells, place.unknown) if x is not None]
    return min(x.start for x in said), max(x.end for x in said)


def _pair_after_lead(places: list[tuple[str, Place]], text: str) -> list[tuple[str, Place]]:
    """'Spot 2 uL onto the agar plate: ON_strains A1 to agar_96 A1', '... onto the agar -
    ON_strains column 1 into agar_96 column 1', '... onto the agar plate (ON_strains A1-A6 ->
    agar_96 A1-A6)': a pair told after the lead that says where the
    liquid goes: its first place is the source, and a plate the lead named without wells is
    the pair's destination said again (one place, never a plate to ask wells of)."""
    for i in range(len(places) - 1):
        (rb, b), (rc, c) = places[i], places[i + 1]
        if not (
            rb in ("dest", "head")
            and rc == "dest"
            and b.labware is not None
            and b.wells is not None
            and c.labware is not None
            and c.wells is not None
            and b.labware.name != c.labware.name
            and _LEAD_END.search(text[: _span(b)[0]])
            and _PAIR_JOIN.fullmatch(text[_span(b)[1] : _span(c)[0]])
        ):
            continue
        before = places[:i]
        lead = before[-1][1] if before and before[-1][0] == "dest" else None
        if lead and lead.labware and lead.wells is None and lead.labware.name == c.labware.name:
            before = before[:-1]
        return [*before, ("source", b), (rc, c), *places[i + 2 :]]
    return places


def assign_liquid(frame: Frame) -> None:
    """The liquid the clause moves: a lab liquid or a quoted name, else the head's noun."""
    text = frame.ents.text
    frame.liquids = list(frame.ents.liquids)
    frame.liquids, described = described_liquids(text, frame.liquids)
    if described:
        frame.extra["described"] = described
    cuts = _role_cuts(text, frame.liquids)
    heads = [m for m in frame.liquids if role_at(cuts, m.start) != "dest"]
    frame.liquid = heads[0] if heads else (frame.liquids[0] if frame.liquids else None)
    if only_receive(text, described):
        frame.liquid = None  # "add 20 uL stain to the cells in X": which liquid is asked
    if frame.family == "transfer" and (diluent := diluent_of(text, frame.liquids)) is not None:
        frame.liquid = diluent  # "normalise the libraries ... by adding water: 12, 20 uL"


def read(clause: Clause, ents: Entities, family: str) -> Frame:
    """The generic frame of a clause; a family's reader refines it."""
    frame = Frame(clause=clause, ents=ents, family=family)
    assign_places(frame)
    assign_quantities(frame)
    assign_liquid(frame)
    return frame
