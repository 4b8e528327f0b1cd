"""What a standard curve says before its steps: a heading or a question naming where it goes
("can you make a curve on bca_p2 row A? BSA at A1, 2-fold ..."), its top standard's well or
stock ("S1 is the neat calibrator, then 1:2 steps"), its concentrations ("1000, 500, ... pg/mL
then 0, made by 2-fold serial dilution of X"): read with the dilution that follows as one.
"""

from __future__ import annotations

import re

from agents.task.planning._frames import Frame
from agents.task.planning.families import Family

CURVE_WORDS = re.compile(
    r"\b(?:standards?|stds?|curves?|dilutions?|series|serial|calibrators?|points?|blanks?)\b"
    r"|\b(?:duplicates?|triplicates?|quadruplicates?)\b",
    re.IGNORECASE,
)


def under_heading(frame: Frame | None, family: Family | None, header: Frame) -> bool:
    """ "Standard curve on assay_384: master mix diluted 2-fold ... A1 to A10": a curve's
    heading without a fold, and the dilution sentence under it that gives one."""
    return (
        frame is not None
        and family is not None
        and family.name == "dilution"
        and (
            header.clause.heading
            or _goal_before(frame, header)
            or _top_before(frame, header)
            or _levels_before(frame, header)
        )
        and (header.ents.fold is None or _same_levels(frame, header))
        and frame.ents.fold is not None
        and not header.ents.volumes()
    )


def _levels_before(frame: Frame, header: Frame) -> bool:
    """ "std curve, column 1: 1000, 500, ... pg/mL then 0, made by 2-fold serial dilution of
    X ...": the curve's concentrations, then how it is made, in the same sentence."""
    return (
        header.ents.series is not None
        and frame.clause.sentence == header.clause.sentence
        and frame.clause.joined in ("then", "comma", "semicolon")
    )


def _same_levels(frame: Frame, header: Frame) -> bool:
    """The heading's fold is its concentrations' ("1000, 500, 250 ..."), the one the dilution
    under it says."""
    said, listed = frame.ents.fold, header.ents.series
    return said is not None and listed is not None and abs(listed.fold - said[0]) < 1e-6


_TOP_IN = re.compile(
    r"(?:\b(?:top|highest|first)\s+(?:standard|std|conc\w*|point)\s+(?:(?:goes\s+)?(?:in|into|at)\s+)?"
    # "start with gBlock std in dil_96 A1, then ten-fold ...": the stock the curve starts from
    r"|^(?:start(?:ing)?|begin(?:ning)?)\s+with\s+[^,;]{1,60}?\s+(?:in|into|at)\s+)"
    r"(?:[\w-]+\s+)?(?:well\s+)?[A-Pa-p]\d{1,2}(?:\s+(?:of|on|in)\s+(?:the\s+)?[\w-]+)?\s*$",
    re.IGNORECASE,
)


# "S1 is the neat calibrator", "top standard (BSA 2 mg/mL)", "standard 1 = X straight": which
# liquid the curve starts from, said before the steps
_TOP_IS = re.compile(
    r"\b(?:S0?1|std\s*#?1|standard\s*#?1|(?:top|highest|first)\s+(?:standard|std|point))"
    r"\s*(?:is\b|=|:|\(|-)",
    re.IGNORECASE,
)


def _top_before(frame: Frame, header: Frame) -> bool:
    """ "top standard in A1, then 1:3 dilutions down to F1", "S1 is the neat calibrator, then
    1:2 steps": the curve's first well (or its stock), then the steps from it in the same
    sentence."""
    return (
        frame.clause.sentence == header.clause.sentence
        and frame.clause.joined in ("then", "comma", "semicolon", "and")
        and (
            (bool(_TOP_IN.search(header.text)) and not frame.ents.labware)
            or (  # (the steps may name the plate when the stock's clause names none)
                bool(_TOP_IS.search(header.text))
                and len({m.name for m in header.ents.liquids}) == 1
                and not (frame.ents.labware and (header.ents.labware or header.ents.wellsets))
            )
        )
    )


def after_top(frame: Frame, family: Family | None, header: Frame) -> bool:
    """A clause no family reads that puts the top standard in a well, and the dilution with a
    fold that goes on from it in the same sentence."""
    return (
        family is not None
        and family.name == "dilution"
        and frame.ents.fold is not None
        and header.ents.fold is None
        and _top_before(frame, header)
    )


_PLACE_FILLER = re.compile(r"[#\s,;:.()-]+|\b(?:on|in|at|the|plate|wells?)\b", re.IGNORECASE)


def place_before(frame: Frame, family: Family | None, header: Frame) -> bool:
    """ "elisa_p1, col 1. calibrator = X, diluent = Y, 2x serial, ...": a piece that only
    names a plate and its wells, and the dilution after it that names none."""
    ents = header.ents
    rest = ents.marked
    for w in ents.wellsets:
        rest = rest[: w.start] + " " * (w.end - w.start) + rest[w.end :]
    return (
        family is not None
        and family.name == "dilution"
        and frame.ents.fold is not None
        and not (frame.ents.labware or frame.ents.wellsets)
        and frame.clause.sentence - header.clause.sentence in (0, 1)
        and bool(ents.labware and ents.wellsets)
        and not (ents.liquids or ents.volumes() or ents.fold)
        and not _PLACE_FILLER.sub("", rest)
    )


def _goal_before(frame: Frame, header: Frame) -> bool:
    """A sentence that only names the curve ("could you make me a standard curve for the
    PicoGreen assay?"), and the next sentence says how."""
    own = {m.name for m in header.ents.labware}
    return (
        frame.clause.sentence == header.clause.sentence + 1
        and (  # "can you make a curve on bca_p2 row A? BSA at A1, 2-fold ...": where it goes
            not (header.ents.wellsets or own)
            or (
                {m.name for m in frame.ents.labware} <= own
                # ("a bsa std curve on bca_p col 1? 2mg/ml bsa, 1:2 ...": the same stock again;
                # "... down column 12 of P? twofold steps, 120 uL per well in X": no place)
                and (
                    {m.name for m in header.ents.liquids} <= {m.name for m in frame.ents.liquids}
                    or not (frame.ents.labware or frame.ents.wellsets)
                )
            )
        )
        and bool(CURVE_WORDS.search(header.text))
    )


_WHERE_LABEL = re.compile(
    r"(?:plates?|wells?|where|location|layout|positions?|dest(?:ination)?|columns?|cols?|rows?)",
    re.IGNORECASE,
)
_WELL_WORDS = re.compile(r"\b(?:down|across|along|of|into|to)\b", re.IGNORECASE)


def where_after(frame: Frame, header: Frame) -> bool:
    """ "8 point 2-fold std curve. plate std_plate, wells A1-H1. diluent ...", "... curve on
    std_plate. Wells: A1-H1.": the sentence after a dilution that names no wells only says
    where it goes (a plate, its wells, or both, and nothing else)."""
    ents, head = frame.ents, header.ents
    mine = {m.name for m in ents.labware}
    if head.wellsets or ents.liquids or ents.quantities or ents.fold or len(mine) > 1:
        return False
    if not (ents.wellsets or mine) or not all(m.sure for m in ents.labware):
        return False
    if mine and head.labware and mine != {m.name for m in head.labware}:
        return False  # (a second plate: a copy or another step, not where this one goes)
    label = (frame.clause.label or "").strip()
    rest = ents.marked
    for w in ents.wellsets:
        rest = rest[: w.start] + " " * (w.end - w.start) + rest[w.end :]
    rest = _WELL_WORDS.sub(" ", rest)
    return (not label or bool(_WHERE_LABEL.fullmatch(label))) and not _PLACE_FILLER.sub("", rest)


_AMOUNT_OR_ASIDE = re.compile(r"\([^()]*\)|\b[\d.]+\s*(?:u[lL]|µ[lL]|m[lL])\b", re.IGNORECASE)


def top_poured(frame: Frame, family: Family | None, header: Frame) -> bool:
    """ "top standard in A1 of P (X, 300 uL), then 2-fold down to G1 ...": the clause that
    pours the top standard into its well, and the dilution that goes on from it in the same
    sentence (read as one: the dilution's first well and stock)."""
    placed = re.sub(r"\s+", " ", _AMOUNT_OR_ASIDE.sub(" ", header.text)).strip()
    return (
        family is not None
        and family.name == "dilution"
        and frame.ents.fold is not None
        and header.ents.fold is None
        and frame.clause.sentence == header.clause.sentence
        and frame.clause.joined in ("then", "comma", "semicolon", "and")
        and len({m.name for m in header.ents.liquids}) == 1
        and not frame.ents.labware
        and (bool(_TOP_IN.search(placed)) or _one_well_then_to(frame, header))
    )


_TO_WELL = re.compile(
    r"\b(?:down|across|along|over)?\s*(?:to|through|until)\s+[A-Pa-p]\d{1,2}\b", re.I
)


def _one_well_then_to(frame: Frame, header: Frame) -> bool:
    """ "200 uL standard in A1 of P, then 2-fold down to H1": one volume of one liquid into
    one well, and steps that name only the well they end at."""
    wells = [w for ws in header.ents.wellsets for w in ws.expand(16, 24)]
    ends = [w for ws in frame.ents.wellsets for w in ws.expand(16, 24)]
    return (
        len(wells) == 1
        and len(header.ents.volumes()) == 1
        and len(ends) == 1
        and bool(_TO_WELL.search(frame.text))
    )
