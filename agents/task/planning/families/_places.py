"""Where a transfer takes from and puts to: the places of a clause by their roles, the wells
they select, sources named by wells only or by a liquid ("each library"), destinations named
by what they hold ("to the cells"), and the volume no candidate well holds. Which plates
the places name is _dest_plates."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt
from agents.task.planning._vocabulary import TREAT_VERBS
from agents.task.planning.families._held import (
    _WELLS_OF,
    beside,
    described_wells,
    holding_any,
    holds,
    taken_out,
    topped,
    wells_named_by,
)
from agents.task.planning.families._lead_plate import lead_plate, on_plate
from agents.task.planning.families._pairing import per_well_volumes
from agents.task.planning.families._worked import worked_wells

_FLAGS = re.IGNORECASE
# Verbs that name the wells first and the liquid after "with" as a fill: "prime X with Y",
# "prep X with Y", "charge X with Y" - a transfer into X
_FILLS = "prime|prep|charge"
_SAME_WELLS = re.compile(
    r"\b(?:same\s+(?:positions?|wells?|layout|columns?|rows?)|matching\s+(?:wells?|positions?)|well[\s-]+to[\s-]+well"
    r"|well[\s-]+(?:for|by)[\s-]+well|plate[\s-]+to[\s-]+plate|keeping\s+the\s+(?:same\s+)?layout"
    r"|1\s*:\s*1|one[\s-]to[\s-]one|corresponding\s+wells?|stamp|quadrants?|Q[1-4])\b",
    _FLAGS,
)


_OF_THOSE = re.compile(
    r"\bof\s+(?:both|each|these|those|the\s+(?:two|same)|all)\s+(?:of\s+the\s+)?columns\b", _FLAGS
)


_BOTH = re.compile(r"\b(?:both|all|each|every)\s+(?:the\s+|of\s+the\s+)?plates\b", _FLAGS)
_PICK = re.compile(r"^(?:cherry[\s-]?pick|hit[\s-]?pick|pick|re-?array)", _FLAGS)
# "... and buffer to the rest", "... to every remaining well"
_REST = re.compile(
    r"\b(?:to|into|in)\s+(?:all\s+)?(?:the\s+)?(?:rest|remaining\s+wells|remainder|others|other\s+wells)\b"
    r"|\b(?:to|into|in)\s+(?:every|each)\s+(?:remaining|leftover)\s+well\b",
    _FLAGS,
)
_AND = re.compile(r"\s*(?:,|and|&|\+|,\s*and)\s*", _FLAGS)
_POOL = re.compile(r"^(?:pool|combine|consolidate|merge)\b", _FLAGS)
_STAMP = re.compile(
    r"^(?:stamp|replicate|copy|duplicate|clone|mirror|reformat|replica(?:[\s-]?plates?)?|daughter)\b",
    _FLAGS,
)


def _copies(frame: Frame) -> bool:
    """The clause (or its label: "Plate-to-plate transfer:") copies a plate's layout."""
    said = [frame.text, frame.clause.label or ""]
    return any(
        _SAME_WELLS.search(t) or _STAMP.match(t) or _LINE_BY_LINE.search(t) or _COPYING.search(t)
        for t in said
    )


def copies_layout(
    frame: Frame, src_sets: list[tuple[str, list[str] | None]], world: r.World
) -> bool:
    """The clause copies the first source's layout ("stamp cmpd into quadrant 2 of assay"):
    a plate's, never a trough's ("water from aux_res to lc384 Q1" copies no trough lanes)."""
    view = world.labware(src_sets[0][0])
    return view.rows > 1 and view.cols > 1 and _copies(frame)


# "Prepare the assay plate by stamping ...", "From MP-07 make a daughter in DP-07a": a copy
# said after the clause's first word
_COPYING = re.compile(
    r"\b(?:by\s+)?(?:stamping|stamped|reformatting|replica[\s-]?plating)\b"
    r"|\b(?:make|prepare|create|pour|set\s+up)\s+(?:a|an|one|the)\s+(?:[\w-]+\s+)?"
    r"(?:daughter|replica|replicate|copy|clone|mirror)\b",
    _FLAGS,
)


# "from samples to dest_plate column by column": a plate's columns, each onto the same column
_LINE_BY_LINE = re.compile(
    r"\b(?:column|row)[\s-]?(?:by[\s-](?:column|row)|wise)\b|\b(?:one\s+)?(?:column|row)\s+at\s+a\s+time\b"
    r"|\bby\s+(?:columns?|rows?)\b|\b(?:column|col|row)[\s-]+(?:for|to)[\s-]+(?:column|col|row)\b",
    _FLAGS,
)


_HEAD_IS_SOURCE = re.compile(
    r"^(?:transfer|move|pipette|pipet|stamp|replicate|copy|pool|combine|consolidate|spot|duplicate|"
    r"clone|mirror|replica[\s-]?plate|re-?array|"
    r"cherry[\s-]?pick|hit[\s-]?pick|split|take|reformat|array"  # "libs_in A1-A3 into them":
    r"|(?=[^,;]*\b(?:in|into|to|onto)\s+(?:the\s+same\s+wells|them|those\s+wells)\b))\b",
    _FLAGS,  # the wells before "into the same wells" are the source
)


def head_is_source(text: str) -> bool:
    """The places a clause names first, before any role word, are where liquid comes from
    ("pool lysate_dw A1-D1 ...", "stamp P ..."), not where it goes ("add 50 uL P A1 ...")."""
    return bool(_HEAD_IS_SOURCE.match(text))


# A label that names a liquid move ("Combine the replicates: A1, A2 -> pool A1; ...").
_LABEL_VERBS = re.compile(
    r"cherry|hit|pick|transfer|stamp|pool|spot|aliquot|add|dispense|combin|consolidat|merg|normali"
    r"|daughter|replica|reformat",
    _FLAGS,
)
_GETS = re.compile(r"\b(?:gets?|receives?|with\s+(?:another\s+)?\d)", _FLAGS)


_FOLLOWING = re.compile(
    r"\b(?:(?:the\s+)?following|these|those|the\s+[\w-]+\s+(?:below|listed|as\s+follows))\b[^:]*:\s*",
    _FLAGS,
)


def _following(text: str, by: dict[str, list[Place]]) -> None:
    """'Hit-pick the following samples from samples into dest_plate column 12: B3, C7': the
    wells listed after the colon are what "the following" names - the source plate's."""
    m = _FOLLOWING.search(text)
    dests, sources = by["dest"], by["source"]
    if m is None or not dests or len(sources) != 1 or sources[0].wells is not None:
        return
    last = dests[-1]
    if last.labware is not None or last.wells is None or last.wells.start < m.end():
        return
    plate = sources[0].labware
    if plate is None:
        return
    by["source"] = [Place(plate, dests.pop().wells)]
    by["head"] = [h for h in by["head"] if not (h.labware and h.labware.name == plate.name)]


def _listed_on(frame: Frame, by: dict[str, list[Place]]) -> bool:
    """Wells each with its own volume, a named liquid and one plate said after them: the wells
    are that plate's, never the liquid's source wells."""
    heads, dests = by["head"], by["dest"]
    return (
        frame.liquid is not None
        and not by["source"]
        and len(dests) == 1
        and dests[0].labware is not None
        and dests[0].wells is None
        and all(pl.labware is None and pl.unknown is None and pl.wells for pl in heads)
        and per_well_volumes(frame, heads) is not None
    )


def _roles(frame: Frame) -> tuple[list[Place], list[Place]]:
    """(sources, destinations) of a clause by the roles of its places and its verb."""
    return lead_plate(frame, *_said_roles(frame))


def _said_roles(frame: Frame) -> tuple[list[Place], list[Place]]:
    text = frame.text
    treated(frame)  # "Feed the cells with medium": the medium is moved
    by = {"head": [], "source": [], "dest": []}  # type: dict[str, list[Place]]
    for role, place in frame.places:
        by[role].append(place)
    _following(text, by)  # before the wells join a plate: they are the source's
    bare = [pl for _, pl in frame.places if pl.labware is not None and pl.wells is None]
    for role, places in by.items():
        plain = [pl for pl in places if pl.labware is not None and pl.wells is None]
        loose = [pl for pl in places if pl.labware is None and pl.unknown is None and pl.wells]
        if (
            len(plain) == 1
            and loose
            and len(places) == 1 + len(loose)
            and (len(bare) == 1 or (places[0] is plain[0] and not _SAME_WELLS.search(text)))
        ):
            # "Normalise these libs with EB - A1 10 uL, B1 12 uL": the wells are on libs;
            # "from samples to dest_plate, columns 1-4": the columns of dest_plate
            by[role] = [Place(plain[0].labware, pl.wells) for pl in loose]
    # "Replicate cmpd on a fresh plate with 2 uL": what a copy verb names first is its source
    gets = _GETS.search(text) and not (_HEAD_IS_SOURCE.match(text) and by["head"])
    if (
        re.match(
            rf"^(?:fill|pre-?fill|{TREAT_VERBS}|inoculate|{_FILLS})",
            text,
            _FLAGS,
        )
        or gets
    ):
        return by["source"], on_plate(by["head"] + by["dest"])
    src_plain = [pl for pl in by["source"] if pl.labware is not None and pl.wells is None]
    if (
        by["head"]
        and all(pl.labware is None and pl.unknown is None and pl.wells for pl in by["head"])
        and len(by["source"]) == len(src_plain) == 1
        and by["dest"]
    ):  # "Copy columns 1 to 6 from samples onto dest_plate": the columns of samples (whatever
        # the verb: "chery-pick E2, A9 from master to inter D1, D2" never drops E2 and A9)
        return [Place(src_plain[0].labware, pl.wells) for pl in by["head"]], by["dest"]
    if _listed_on(frame, by):  # "A1 10 uL, A2 20 uL, A3 30 uL dye on plate_1": its wells
        return [], [Place(by["dest"][0].labware, pl.wells) for pl in by["head"]]
    if not by["source"] and by["head"] and (by["dest"] or _HEAD_IS_SOURCE.match(text)):
        return by["head"], by["dest"]
    if not by["dest"] and by["head"]:
        if _copies_of_held(frame, by["head"]):
            return by["head"], []  # "ON_culture A1 in triplicate, 20 uL": where to is asked
        return by["source"], by["head"]
    return by["source"], by["dest"]


def _copies_of_held(frame: Frame, places: list[Place]) -> bool:
    """Replicates of wells that hold liquid, no liquid named: those wells are what is copied."""
    world = frame.extra.get("world")
    if not frame.ents.replicates or frame.ents.liquids or not isinstance(world, r.World):
        return False
    named = [(pl.labware.name, pl) for pl in places if pl.labware is not None and pl.wells]
    return bool(named) and all(
        world.volume.get((lw, w), 0) > 0 for lw, pl in named for w in _expand(pl, world, lw)
    )


def _expand(place: Place, world: r.World, lw: str) -> list[str]:
    view = world.labware(lw)
    return place.wells.expand(view.rows, view.cols) if place.wells else []


def _all(world: r.World, lw: str) -> list[str]:
    view = world.labware(lw)
    return [f"{chr(65 + r_)}{c}" for r_ in range(view.rows) for c in range(1, view.cols + 1)]


def _source_wells(
    place: Place, lw: str, dest_wells: list[str], frame: Frame, p: r.Planning
) -> list[str]:
    filled = [w for (lid, w), v in p.world.volume.items() if lid == lw and v > 0]
    if frame.liquid is not None and len(filled) > 1:
        name = r.liquid(frame.liquid, p)
        holding = [w for w in filled if p.world.contents.get((lw, w), {}).get(name, 0) > 0]
        if len(holding) == 1:
            return holding
        filled = holding or filled
    if len(filled) == 1:
        return filled
    view = p.world.labware(lw)
    if lane := r.lane_well(frame.text, view.rows, view.cols):
        return lane  # "from trough 2", "from the 2nd trough"
    if _POOL.match(frame.text) and len(filled) > 1 and len(set(dest_wells)) == 1:
        return sorted(filled, key=lambda w: (w[0], int(w[1:])))  # "pool all samples into H12"
    if _SAME_WELLS.search(frame.text) or (
        view.rows * view.cols > 12 and dest_wells and all(w in filled for w in dest_wells)
    ):
        return list(dict.fromkeys(dest_wells))  # the same positions (on every plate named)
    raise Ask(
        f"Which wells of {lw} should the liquid come from?",
        ["source"],
        [f"{lw} {w}" for w in filled[:12]] or [f"{lw} A1"],
    )


WITH_VERB = re.compile(
    rf"^(?:{TREAT_VERBS}|inoculate|{_FILLS})\b[^,;]*\b(?:with|from)\b",
    _FLAGS,
)  # "inoculate X with Y", "inoculate X from the overnights in Y": a transfer into X


def treated(frame: Frame) -> None:
    """ "Feed the cells with 50 uL medium": the liquid after "with" is the one moved."""
    if WITH_VERB.match(frame.text):
        after = [m for m in frame.liquids if re.search(r"\bwith\b[^,;]*$", frame.text[: m.start])]
        frame.liquid = after[0] if after else frame.liquid


# "100 uL/well, elisa_plate B1:B12", "50 uL stop solution per well": a volume for each well.
# "then 50 uL stop solution (to the same wells)", "stop with 50 uL stop solution": the next
# liquid of a run, into the wells the run works on (a transfer without its verb).
NEXT_LIQUID = re.compile(
    r"^(?:(?:stop|quench|block|develop)\s+(?:the\s+\w+\s+|it\s+|them\s+)?with\s+)?"
    r"(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|m[lL])\b(?:\s+of)?\s+(?:(?![A-Pa-p]\d|\w+_)[^,;])*?"
    r"(?:\s+(?:to|into|in)\s+(?:the\s+same\s+(?:wells?|columns?|rows?|positions?)|each(?:\s+well)?"
    r"|every\s+well|them|those(?:\s+wells)?|all\s+of\s+them|the\s+wells))?\s*$",
    _FLAGS,
)
_PER_WELL = re.compile(
    r"\d\s*(?:u[lL]|m[lL])\b[^,;]{0,40}?(?:/\s*well|per\s+well|a\s+well|each)\b", _FLAGS
)
_EACH_AFTER = re.compile(r"^\s*(?:each|per\s+well|apiece|/\s*well|a\s+well)\b", _FLAGS)


def _fits_nowhere(frame: Frame, p: r.Planning) -> None:
    """Refuse a per-well volume no candidate plate's wells hold (before asking which)."""
    if frame.volume is None or frame.volume.kind != "volume" or frame.total is not None:
        return
    named = [pl.labware.name for role, pl in frame.places if role == "dest" and pl.labware]
    candidates = named or r.work_plates(p.world)
    rooms = [p.world.labware(lw).well_max_volume_ul for lw in candidates]
    if rooms and all(0 < room < frame.volume.value - 1e-6 for room in rooms):
        raise Refuse(
            f"{frame.volume.text} is more than a well of {', '.join(candidates)} holds "
            f"({fmt(max(rooms), 'uL')} at most)",
            "capacity",
        )


def _fits(wells: list[str], plate: str, p: r.Planning) -> None:
    view = p.world.labware(plate)
    for w in wells:
        if ord(w[0]) - 65 >= view.rows or int(w[1:]) > view.cols:
            raise Refuse(f"{w} is not on {plate} ({view.rows}x{view.cols})", "plate_size")


_HOLDING = re.compile(
    r"\b(?:that|which)\s+(?:already\s+)?(?:has|have|hold|holds|contain|contains)\b|\bcontaining\b"
    r"|\b(?:non-?empty|filled|occupied)\s+wells\b",
    _FLAGS,
)
_LAST_WELL = re.compile(
    r"\b(?:the\s+)?(?:last|final|end)\s+(?:wells?|dilutions?|ones?|points?)\b"
    # "throw away the last 100 uL", "discard the excess": what the chain's end holds too much
    r"|\bthe\s+(?:last|final|extra|excess)\s+[\d.]+\s*(?:u[lL]|µ[lL]|m[lL])\b"
    r"|\bthe\s+(?:excess|extra|surplus|leftover|remainder)\b",
    _FLAGS,
)
_AS_WELL = re.compile(r"\b(?:as\s+well|too|also)\b", _FLAGS)


def _volume_place(frame: Frame) -> object:
    for role in ("source", "head", "dest"):
        place = getattr(frame, role)
        if not place.empty:
            return place
    return frame.head


def _topped_plates(place: object, p: r.Planning) -> list[str] | None:
    """ "Top up every well to 200 uL" naming no plate: the one work plate holding anything
    (an empty plate has nothing to top up); None leaves the choice to the usual rules."""
    if getattr(place, "labware", None) is not None or getattr(place, "unknown", None) is not None:
        return None
    held = [lw for lw in r.work_plates(p.world) if holding_any(p, lw)]
    return held if len(held) == 1 else None


def volume_wells(frame: Frame, p: r.Planning, what: str) -> tuple[str, list[str]]:
    place = _volume_place(frame)
    named_by = wells_named_by(frame, p) if what == "top up" else None  # "each culture well"
    by = named_by or beside(frame, p)
    taken = None if by else taken_out(frame, p, what)
    plate = r.labware(
        place,  # type: ignore[arg-type]
        p,
        what,
        holding=by or taken,
        implicit=_topped_plates(place, p) if what == "top up" else None,
    )
    if what == "top up" and (worked := worked_wells(frame, p, plate, place)):
        return plate, worked  # "then make every well up to 200 uL": the wells filled so far
    last = _LAST_WELL.search(frame.text)  # "discard 100 uL from the last well": of the chain
    if getattr(place, "wells", None) is None and p.plate == plate and p.chain_ends and last:
        return plate, list(p.chain_ends)
    if getattr(place, "wells", None) is None and p.plate == plate and p.wells:
        return plate, list(p.wells)
    emptied = what in ("exchange the medium in", "take liquid from")
    if getattr(place, "wells", None) is None and emptied and (held := holding_any(p, plate)):
        return plate, held  # "change the medium on cell_plate": the wells holding something
    said, liquid = (
        getattr(place, "wells", None),
        by if by and (_WELLS_OF.search(frame.text) or by == named_by) else None,
    )
    if said is None and what == "top up" and (found := topped(p, plate, liquid)):
        return plate, found  # "top seedlings24 up to 1.5 mL", "top the amplicon wells up"
    wells = r.wells(place, plate, p, f"should I {what}", frame)  # type: ignore[arg-type]
    if taken and getattr(place, "labware", None) is None:
        holds(p, plate, wells, taken)
    wells = described_wells(
        frame, p, plate, wells, getattr(said, "start", None)
    )  # "the overnight culture wells in col 1"
    if _HOLDING.search(frame.text):  # "every well of dna_plate that has DNA": those wells only
        wells = [w for w in wells if p.world.well_volume(plate, w) > 0] or wells
    if (
        frame.ents.refers_back
        and _AS_WELL.search(frame.text)
        and p.plate == plate
        and p.wells
        and not set(p.wells) & set(wells)
    ):
        wells = list(p.wells) + wells  # "top it up ..., and B1 through D1 as well"
    return plate, wells
