"""Normalisation from each well's concentration: "normalise amp_plate A1-A3 to 5 ng/uL with
EB buffer: A1 25, B1 50, C1 12.5 ng/uL".

Computable only from what the request and the lab state give, never guessed:

- in place (no other plate, no final volume): each well holds V (the lab state) at c, so
  V * (c / t - 1) of diluent goes in; a well with no known volume is asked about;
- into another plate with a final volume F ("in 20 uL", "into norm_out A1-A3"): F * t / c of
  each sample and F minus that of diluent, the diluent first (one tip), then each sample (a tip
  each);
- a mass per well ("50 ng of each in 20 uL"): m / c of sample, diluent to F.

A well already at the target needs nothing; a well below it cannot be diluted up to it (the
request is refused for that physical reason); a concentration in another dimension (nM vs
ng/uL), a missing diluent or a missing concentration is asked about.
"""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt
from agents.task.planning.families import Family
from agents.task.planning.families import _concentrations as conc
from agents.task.planning.families._norm_detect import detect
from agents.task.planning.families._samples_first import filled, swapped
from agents.task.planning.families.transfer import mixing

_FLAGS = re.IGNORECASE
_WITH = re.compile(
    r"\b(?:with|using|in|diluent:?|diluted\s+in)\s+(?:the\s+|some\s+)?"
    r"(?:\d+(?:\.\d+)?\s*(?:u[lL]|µ[lL])\s+(?:of\s+)?)?$",
    _FLAGS,
)
_EPS = 1e-6


_CONC_LABEL = re.compile(r"^\s*(?:(?:input|sample|stock)\s+)?(?:conc\w*|qubit)\b", _FLAGS)


def conc_list(frame: Frame, family: Family | None, head: Frame) -> bool:
    """A piece that only lists wells and their concentrations ("A1 25.3", "Concs: B1 40"), or
    only concentrations, in the order of the head's wells ("Qubit: 10, 8, 4 ng/uL")."""
    ents = frame.ents
    plain = not ents.liquids and not ents.volumes()
    if plain and not ents.wellsets and not ents.labware:
        # "Qubit (ng/uL): 10, 8, 4" (a label), "Conc. (nM): 20, 12" (not one: the dot)
        label = frame.clause.label or ""
        unit = conc.bracketed_unit(label) or conc.bracketed_unit(frame.text)
        named = unit is not None or _CONC_LABEL.match(label)  # "concs: 25/50/12.5": the target's
        return len(conc.CONC.findall(frame.text)) + len(conc.BARE.findall(frame.text)) >= 2 and (
            (conc.said(frame.text) or bool(named)) and bool(head.ents.wellsets)
        )
    plain = plain and bool(ents.wellsets)
    return plain and (not ents.labware or conc.said(frame.text))  # "concs libs A1 40 nM, ..."


# "20 uL per well" into another plate: what each destination well ends with
_PER_DEST = re.compile(r"^\s*(?:per\s+well|/\s*well|a\s+well|(?:in|into)?\s*each\s+well)\b", _FLAGS)
# a piece after the normalisation that only gives the final volume ("IDTE to 20 uL total")
_FINAL_WORDS = re.compile(
    r"\b(?:final|total|top(?:ped)?\s+(?:up|off)|make\s+(?:it\s+|them\s+)?up|bring|fill)\b"
    r"|\bto\s+\d+(?:\.\d+)?\s*(?:u|µ)l\b|^\s*\d+(?:\.\d+)?\s*(?:u|µ)l\s+(?:per|a|/)\s*well\b",
    _FLAGS,
)


def final_piece(frame: Frame, head: Frame) -> bool:
    """A piece that only says the final volume of a normalisation said before it without one
    ("..., IDTE to 20 uL total", "top up to 20 uL with IDTE", "20 uL per well")."""
    ents = frame.ents
    return (
        head.final is None
        and (conc.target(head.text) or conc.target(head.clause.label or "")) is not None
        and conc.mass(head.text) is None
        and not ents.wellsets
        and not ents.labware
        and len(ents.volumes()) == 1
        and len(ents.liquids) <= 1
        and not conc.said(frame.text)
        and bool(_FINAL_WORDS.search(frame.text))
    )


# the word just before the plate a piece sends the samples to: "put them in X", "into X",
# "destination: X", "output plate X"
_INTO_WORD = re.compile(
    r"\b(?:in|into|to|onto|destination|dest|output(?:\s+plate)?|target\s+plate)\s*:?\s*"
    r"(?:the\s+)?(?:(?:empty|fresh|new|clean)\s+)?(?:plate\s+)?$",
    _FLAGS,
)


_ONLY_PLACE = re.compile(r"\s*(?:[A-Pa-p]\d{1,2}(?:\s*[-–:]\s*[A-Pa-p]\d{1,2})?)?\s*[.;]?\s*")


def dest_piece(frame: Frame, head: Frame, final_said: bool = False) -> bool:
    """A piece after a normalisation that names the plate its samples go into, said apart
    ("...; put them in norm_out A1-D1", "final 200 uL in PBS, into norm_out A1-D1"), when the
    normalisation names only the samples' plate and a final volume (or a mass) is said (in
    a piece before it, too: ``final_said``); the samples' plate may be named in the pieces
    that list them ("Normalisation to 4 ng/uL, 40 uL final / extracts A1 20 ng/uL / ...")."""
    ents = frame.ents
    if len(ents.labware) != 1 or conc.said(frame.text) or conc.CONC.search(frame.text):
        return False
    own = {m.name for m in head.ents.labware}
    if len(own) > 1 or ents.labware[0].name in own or len(ents.liquids) > 1:
        return False
    vols = ents.volumes()
    if len(vols) > 1 or (vols and not _FINAL_WORDS.search(frame.text)):
        return False  # "then add 5 uL to plate_2": a step of its own
    if head.final is None and not (vols or final_said) and conc.mass(head.text) is None:
        return False  # no final volume anywhere: not a normalisation into another plate
    label = frame.clause.label or ""  # "Output plate: norm96 A3-C3"
    before = frame.text[: ents.labware[0].start]
    if not before.strip() and _ONLY_PLACE.fullmatch(frame.text[ents.labware[0].end :]):
        return True  # "...: 20 and 10 ng/uL; norm_plate A1-B1": the place alone
    return bool(_INTO_WORD.search(before) or (not before.strip() and _INTO_WORD.search(label)))


_OF_SAMPLE = re.compile(r"\s*(?:of|from)\b(?!\s*(?:a\s+)?\d)", re.IGNORECASE)  # ("40 uL of 4 nM")
_ENDS = re.compile(r"\s*(?:each|final|total|per\s+well|/\s*well)\b", re.IGNORECASE)
_IN = re.compile(r"\b(?:in|final(?:\s+volume(?:\s+of)?)?)\s*:?\s*$", re.IGNORECASE)


def _final(frame: Frame, into: bool) -> float | None:
    """The final volume: said as such, or "20 uL per well" of another plate."""
    if frame.final is not None:
        return frame.final.value
    text = frame.ents.text
    per = [q for q in frame.ents.volumes() if into and _PER_DEST.match(text[q.end :])]
    if len(per) == 1:
        return per[0].value
    # "into Y, 0.8 mg/mL final, 250 uL, PBS", "to 10 ng/uL in Y (40 uL each, water)": with a
    # level and another plate, the one volume said is what each sample ends at (never "5 uL of
    # each", what is taken)
    said = frame.ents.volumes()  # (without another plate, said as each well's end: "40 uL
    # each", "in 40 uL": in place could not honour it, so it is never dropped)
    if (
        len(said) == 1
        and not _OF_SAMPLE.match(text[said[0].end :])
        and (into or _ENDS.match(text[said[0].end :]) or _IN.search(text[: said[0].start]))
    ):
        return said[0].value
    return None


def build(frame: Frame, p: r.Planning) -> str:
    world = p.world
    frame.extra["world"] = world  # the mixing reader checks its cycles against the lab
    level = conc.target(frame.text)
    amount = conc.mass(frame.text)
    places = [pl for _, pl in frame.places if pl.labware is not None]
    src_place, dest_place = _roles(places, frame, p)
    src_lw = r.labware(src_place or Place(), p, "take the samples from")
    view = world.labware(src_lw)
    skip = [x for x in (level, amount) if x is not None]
    default = None if level is None else "ng/uL" if level.dimension == "mass" else "nM"
    other = frozenset(
        pl.wells.start for pl in places if pl.wells and pl.labware and pl.labware.name != src_lw
    )
    given = conc.per_well(frame, view.rows, view.cols, skip, default, other)
    if not given:
        raise Ask(
            "Normalising to a concentration needs each well's concentration now (e.g. A1 25 "
            "ng/uL, B1 40 ng/uL), or the volumes to add: which?",
            ["volume"],
            ["A1 25 ng/uL, B1 40 ng/uL, ...", "A1 5 uL, B1 10 uL, ..."],
        )
    named = src_place.wells.expand(view.rows, view.cols) if src_place and src_place.wells else []
    if unsaid := [w for w in named if w not in {w for w, _ in given}]:
        raise Ask(  # never normalise fewer wells than named
            f"What is the concentration of {src_lw} {', '.join(unsaid)}?", ["volume"], []
        )
    dims = {c.dimension for _, c in given} | ({level.dimension} if level else set())
    if len(dims) > 1 or (amount and not all(conc.matches(amount, c) for _, c in given)):
        raise Ask(
            "The concentrations are in different units (mass and molar): give them all in one "
            "(ng/uL or nM)",
            ["volume"],
            ["ng/uL", "nM"],
        )
    final = _final(frame, dest_place is not None)
    cycles, _ = mixing(frame)
    if dest_place is None and final is None and amount is None and level is not None:
        return _in_place(frame, p, src_lw, given, level.value, _diluent(frame, p, src_lw), cycles)
    if amount is not None:
        unit = "ng" if amount.dimension == "amount" else "fmol"
        share, what = amount.value, f"{amount.value:g} {unit} of each"  # m / c of each sample
    elif level is not None and final is not None:
        share, what = final * level.value, f"to {level.value:g} {_unit(level)}"  # F * t / c
    else:
        raise Ask("In what final volume (uL) should each normalised sample be?", ["volume"], [])
    dst_lw = dest_place.labware.name if dest_place and dest_place.labware else None
    if dst_lw is None:
        empty = [lw for lw in r.plates(world) if lw != src_lw and world.holds_nothing(lw)]
        raise Ask(
            "Which plate should the normalised samples go into?",
            ["plate"],
            empty or r.plates(world),
        )
    dview = world.labware(dst_lw)
    wells = dest_place.wells.expand(dview.rows, dview.cols) if dest_place.wells else []  # type: ignore[union-attr]
    if dst_lw != src_lw:  # "extracts A1 -> norm_out A1\nextracts B1 -> norm_out B1": a line each
        wells = _named_on(places, dst_lw, dview.rows, dview.cols) or wells
    wells = wells or [w for w, _ in given]
    if len(wells) == 1 and len(given) > 1 and amount is not None and final is None:
        wells = wells * len(given)  # "pool 20 ng of each (10, 5, 4 ng/uL) into pool A1"
    if len(wells) != len(given):
        raise Ask(f"{len(given)} samples but {len(wells)} destination wells: which wells?",
                  ["wells"], [])  # fmt: skip
    moves = []
    for (src_well, c), dst_well in zip(given, wells, strict=True):
        sample = share / c.value
        if final is not None and sample > final + _EPS:
            raise Refuse(
                f"{src_lw} {src_well} is {c.value:g} {_unit(c)}, too dilute to reach the target "
                f"in {fmt(final, 'uL')}: dilution cannot raise a concentration",
                "capacity",
            )
        moves.append((src_well, dst_well, round(sample, 2), round((final or sample) - sample, 2)))
    lh = world.labware(dst_lw).instrument
    if final is None and any(_WITH.search(frame.text[: m.start]) for m in frame.ents.liquids):
        raise Ask(  # "50 ng of each with EB": a diluent named and no volume it makes up
            "In what final volume (uL) should each normalised sample be?", ["volume"], []
        )
    diluent = _diluent(frame, p, src_lw) if final is not None else ""
    if diluent:  # the diluent first, into empty wells: one tip
        src = r.source_of(diluent, sum(m[3] for m in moves), world, {(dst_lw, w) for w in wells})
        ops = [pip.Op(src, (dst_lw, d), v) for _, d, _, v in moves if v > _EPS]
        pip.emit(world, lh, ops, 1, pip.policy_used(ops, frame.ents.tips or p.tips))
    ops = [pip.Op((src_lw, s), (dst_lw, d), v, cycles) for s, d, v, _ in moves]
    policy = pip.policy_used(ops, frame.ents.tips or p.tips)
    pip.emit(world, lh, ops, 1, policy)
    p.policies_used.append(pip.POLICIES[policy])
    p.plate, p.wells = dst_lw, wells
    into = f" in {fmt(final, 'uL')} with {diluent} (first)" if final is not None else ""
    return f"normalise {len(moves)} samples of {src_lw} {what}{into} into {dst_lw}, a tip each"


def _in_place(
    frame: Frame,
    p: r.Planning,
    plate: str,
    given: list[tuple[str, conc.Level]],
    to: float,
    diluent: str,
    cycles: int,
) -> str:
    """V * (c / t - 1) of diluent into each well, V from the lab state."""
    world = p.world
    adds = []
    for well, c in given:
        held = world.well_volume(plate, well)
        if abs(c.value - to) <= _EPS:
            continue  # already at the target: nothing to add
        if held <= _EPS:
            raise Ask(
                f"{plate} {well} holds nothing I know of: how many uL does it hold, or which "
                "final volume?",
                ["volume"],
                [],
            )
        if c.value + _EPS < to:
            raise Refuse(
                f"{plate} {well} is {c.value:g} {_unit(c)}, below the {to:g} {_unit(c)} asked: "
                "dilution cannot raise a concentration",
                "capacity",
            )
        adds.append((well, round(held * (c.value / to - 1), 2)))
    if all(v <= _EPS for _, v in adds):
        raise Refuse(f"every well is already at {to:g}: nothing to add", "nothing_to_do")
    src = r.source_of(diluent, sum(v for _, v in adds), world, {(plate, w) for w, _ in adds})
    ops = [pip.Op(src, (plate, w), v, cycles) for w, v in adds if v > _EPS]
    policy = pip.policy_used(ops, frame.ents.tips or p.tips)
    pip.emit(world, world.labware(plate).instrument, ops, 1, policy)
    p.policies_used.append(pip.POLICIES[policy])
    p.plate, p.wells = plate, [w for w, _ in given]
    return (
        f"normalise {plate} {', '.join(w for w, _ in given)} to {to:g} {_unit(given[0][1])} in "
        f"place: {diluent} ({src[0]} {src[1]}) by each well's volume and concentration"
    )


def _named_on(places: list[Place], plate: str, rows: int, cols: int) -> list[str]:
    """Every well the clause names on ``plate``, in the order said."""
    named = [pl.wells for pl in places if pl.labware and pl.labware.name == plate and pl.wells]
    return [w for ws in named for w in ws.expand(rows, cols)]


def _roles(places: list[Place], frame: Frame, p: r.Planning) -> tuple[Place | None, Place | None]:
    """(the samples' place, the destination's), by where the liquid is when the words give
    both places one role or none (``_samples_first``)."""
    dest = next((pl for role, pl in frame.places if role == "dest" and pl.labware), None)
    src = next((pl for pl in places if pl is not dest), None)
    plates = list(dict.fromkeys(pl.labware.name for pl in places if pl.labware))
    if dest is None and src is not None and len(plates) == 2:
        dest = next(pl for pl in places if pl.labware and pl.labware.name == plates[1])
    if src is None and dest is not None and filled(dest, p):
        return dest, None  # "equalise the gDNA in dna_plate B1-B3 ..."
    if src is not None and dest is not None and swapped(src, dest, p):
        return dest, src
    return src, dest


def _diluent(frame: Frame, p: r.Planning, plate: str) -> str:
    """The liquid the samples are diluted with: the one after "with" / "using" / "in", else
    the one liquid named that the samples' plate does not hold."""
    named = [m for m in frame.ents.liquids if _WITH.search(frame.text[: m.start])]
    held = {n for (lw, _), mix in p.world.contents.items() if lw == plate for n in mix}
    named = named or [m for m in frame.ents.liquids if m.name not in held]
    if len({m.name for m in named}) != 1:
        raise Ask("Which liquid should I dilute the samples with?", ["liquid"], r.liquids(p.world))
    return r.liquid(named[0], p)


def _unit(c: conc.Level) -> str:
    return "ng/uL" if c.dimension == "mass" else "nM"


FAMILY = Family("normalise", detect, build)
