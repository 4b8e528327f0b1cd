"""Stage 5a of the rule planner: the pieces of one serial-dilution sentence, read as one.

"2-fold, A1 to A11, A12 blank, 100 uL final", "..., 180 uL buffer per well, transfer 20 uL",
"6 points of 1:2, then 2 blanks, 100 uL each", and the chain written under a dilution heading
("2-fold serial dilution: A1 -> A2 -> A3, 100 uL in each well, dye into buffer") are parts of
the dilution they follow, not clauses of their own.
"""

from __future__ import annotations

import re

from agents.task.planning._blanks import blank_note
from agents.task.planning._curve_leads import (
    CURVE_WORDS,
    after_top,
    place_before,
    top_poured,
    under_heading,
    where_after,
)
from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._ratio_heads import ratio_headings, sized_place
from agents.task.planning._reading import Read, _folded, fold_into_previous
from agents.task.planning._series_items import (
    _ROLE_PIECE,
    _VERB_START,
    _fold_under,
    _stock_under,
)
from agents.task.planning.families import Family
from agents.task.planning.families._blank_wells import last_is_blank
from agents.task.planning.families._dilution_words import KEEP_EXCESS, tip_rule
from agents.task.planning.families._serial_volumes import says_step

_FIRST_WELL = re.compile(r"\b(?:the\s+)?(?:first|top)\s+(?:well|standard|point)\b", re.IGNORECASE)


_STARTING_WITH = re.compile(r"^(?:starting|beginning|start)\s+with\b", re.IGNORECASE)
_STEP_ONLY = re.compile(
    r"^(?:transfer|carry|move|pass)\s+[\d.]+\s*uL(?:\s+(?:each|per|every)\s+(?:step|time|transfer))?"
    # "..., transfer 150 uL, 150 uL per well": the step, and the level each well ends at
    r"(?:\s*,?\s*[\d.]+\s*uL\s+(?:final|total|each|per\s+well|/\s*well|in\s+each(?:\s+well)?))?$",
    re.IGNORECASE,
)
_BLANKS_AFTER = re.compile(
    r"^(?:a|an|one|two|three|four|\d)\s+(?:[\w-]+\s+)?blanks?\b", re.IGNORECASE
)


def _unsized(header: Frame) -> bool:
    return header.volume is None and header.final is None and header.total is None


def _completes(frame: Frame | None, family: Family | None, header: Frame) -> bool:
    """ "2-fold serial dilution: A1 -> A2 -> A3, 100 uL in each well, dye into buffer": the
    chain under a dilution heading that names the stock is the whole dilution."""
    return (
        frame is not None
        and family is not None
        and family.name == "chain"
        and header.clause.heading
        and header.ents.fold is not None
        and not header.places
        and bool(frame.ents.liquids or header.ents.liquids)  # the stock named above or here
        and any(w.chain for w in frame.ents.wellsets)
    )


def _stock_first(frame: Frame, header: Frame) -> bool:
    """The dilution's stock said into the first well of its line ("..., along row C, 200 uL
    BSA standard in C1"): how much stock starts the chain, not a filling step of its own."""
    ents, head = frame.ents, header.ents
    wells = [w for ws in ents.wellsets for w in ws.expand(16, 24)]
    if header.ents.fold is None or len(wells) != 1 or len(ents.volumes()) != 1:
        return False
    if not head.liquids or {m.name for m in ents.liquids} != {head.liquids[0].name}:
        return False
    lines = [ws.expand(16, 24) for ws in head.wellsets]
    return any(line and line[0] == wells[0] for line in lines)


_DILUENT_ONLY = re.compile(
    r"^(?:(?:diluted\s+|made\s+up\s+)?(?:in|with|using|into)\s+)?(?:the\s+)?#+\s*\.?$",
    re.IGNORECASE,
)
_PER_WELL = re.compile(
    r"^(?:#+\s*(?:final(?:\s+volume)?)?|final(?:\s+volume)?\s*(?:of|=|:|is)?\s*#+)\s*"
    r"(?:(?:per|in|for|into)\s+(?:each|every|all(?:\s+the)?|the)?\s*wells?"
    r"|each(?:\s+well)?|/\s*well|in\s+each)?(?:\s+(?:at|in)\s+the\s+end)?$",  # "... at the end"
    re.IGNORECASE,
)


def _roles_said(marked: str) -> bool:
    """Pieces that say which liquid is the stock and which the diluent, and at most a volume
    per well ("top = BSA standard, diluent PBS, 150 uL per well")."""
    parts = [part.strip() for part in marked.split(",") if part.strip()]
    roles = [part for part in parts if _ROLE_PIECE.match(part)]
    return bool(roles) and all(p in roles or _PER_WELL.match(p) for p in parts)


def _said_after(frame: Frame, header: Frame) -> bool:
    """ "2-fold serial dilution of X across columns 1 to 6. Y as diluent, 150 uL final in every
    well.": the next sentence only says which liquid dilutes (or is the stock) and how much
    ends in each well, about the dilution before it."""
    last = max([header.clause.sentence, *(c.sentence for c in _folded(header))])
    after = frame.clause.joined == "sentence" and frame.clause.sentence == last + 1
    going_on = last > header.clause.sentence and frame.clause.sentence == last  # "...; 100 uL"
    if not (after or going_on):
        return False
    if after and header.ents.fold is not None and where_after(frame, header):
        return True  # "... std curve. plate std_plate, wells A1-H1.": where it goes
    ents = frame.ents
    every = all(part.kind == "all" for w in ents.wellsets for part in w.parts)  # "every well"
    if header.ents.fold is None or not every or ents.labware or ents.fold is not None:
        return False
    # "Diluent: PBS." - the role said as the piece's label
    label = (frame.clause.label or "").strip()
    marked = f"{label}: {ents.marked}" if re.fullmatch(r"diluents?", label, re.I) else ents.marked
    parts = [part.strip(" .") for part in marked.split(",") if part.strip(" .")]
    roles = [part for part in parts if _ROLE_PIECE.match(part)]
    return (
        bool(parts)
        and all(p in roles or _PER_WELL.match(p) for p in parts)
        and (bool(roles) or _unsized(header))
    )


def _fragment(frame: Frame | None, family: Family | None, header: Frame) -> bool:
    """A verbless piece of a dilution sentence that says more about it ("2-fold", "A1 to A11",
    "A12 blank", "100 uL final"), not a filling step of its own ("diluent 100 uL in B1..H1")."""
    if frame is None:
        return False
    folded = header.extra.get("folded")
    # "...dilution, 8-channel:\n- plate_b cols 1-10\n- 50 uL final": the lines under its heading
    listed = frame.clause.joined in ("item", "start") and (
        header.clause.heading
        or any(c.joined == "item" for c in (folded if isinstance(folded, list) else []))
    )
    if (
        frame.clause.joined in ("then", "sentence", "item")
        and frame.clause.sentence - header.clause.sentence <= 1
        and _BLANKS_AFTER.match(frame.text)
    ):
        return True  # "6 points of 1:2, then 2 blanks, 100 uL each" (or ". Then", a new item)
    if frame.clause.sentence == header.clause.sentence + 1 and tip_rule(frame.text):
        return True  # "... 100 uL final. Same tip for the buffer please.": the fill's tips
    if frame.clause.sentence != header.clause.sentence and not listed:
        return _said_after(frame, header)
    ents = frame.ents
    if (
        (_STEP_ONLY.match(frame.text) or (family is not None and family.name == "chain"))
        and frame.clause.joined in ("comma", "and")
        and not frame.places
        and not ents.liquids
        and header.ents.fold is not None
    ):
        return True  # "..., 180 uL buffer per well, transfer 20 uL": what each step carries
    if (
        frame.clause.joined in ("comma", "semicolon", "and")
        and says_step(frame.text)
        and not (frame.places or ents.wellsets or ents.labware)
        and header.ents.fold is not None
        and _unsized(header)
    ):
        return True  # "..., 2-fold, A1-G1, transfer 60 uL into 60 uL TE each step": the step
    if frame.clause.joined not in ("comma", "semicolon", "and") and not listed:
        return False
    if family is not None and family.name == "mix" and not frame.places and not ents.volumes():
        return True  # "..., 100 uL final, mix 5x": how each step mixes
    if _roles_said(ents.marked) and not ents.wellsets and header.ents.fold is not None:
        return True  # "..., 2-fold, top = BSA standard, diluent PBS, 150 uL per well"
    if _DILUENT_ONLY.match(ents.marked.strip()) and header.ents.fold is not None:
        return True  # "...; 100 uL per well; buffer.": a liquid said alone is what dilutes
    if (
        frame.final is not None
        and not (ents.liquids or ents.wellsets or ents.labware)
        and (header.ents.fold is not None and _unsized(header))
    ):
        return True  # "..., made up to 100 uL each": the level the dilution's wells end at
    if _VERB_START.match(frame.text):
        return False
    if family is not None and family.name not in ("transfer", "dilution", "context"):
        return False
    if _FIRST_WELL.search(frame.text) and not ents.wellsets and not ents.labware:
        return True  # "..., 150 uL dye in the first well": how much stock starts the chain
    if _STARTING_WITH.match(frame.text) and header.ents.fold is not None:
        return True  # "..., starting with 200 uL standard in C1": the stock that starts it
    if _ROLE_PIECE.match(ents.marked.strip()) and not ents.volumes() and not ents.wellsets:
        return True  # "..., top = BSA standard, diluent PBS, ...": which liquid is which
    if sized_place(frame, header):
        return True
    fills = [q for q in frame.volumes if q is not frame.final and q is not frame.total]
    bare = not (ents.liquids or ents.wellsets or ents.labware) and len(fills) == 1
    if fills and (ents.liquids or frame.final is None) and not (bare and _unsized(header)):
        return False  # (a bare "100 uL each" says the volume of a dilution that has none)
    if (
        family is not None
        and family.name == "context"
        and not (
            blank_note(ents)
            or bare
            or (
                ents.blanks and (frame.final or not ents.marked.strip())
            )  # "H1 blank", "H1 = blank, 100 uL final"
        )
    ):
        return False
    return bool(
        ents.fold or frame.final or frame.total or ents.blanks or blank_note(ents)
        or (last_is_blank(frame.text) and not ents.wellsets)
        or (ents.wellsets and not ents.volumes()) or (bare and _unsized(header))
        or (ents.steps and not (ents.volumes() or ents.liquids or ents.labware))  # "; 8 wells"
    )  # fmt: skip


def _places_for(frame: Frame | None, family: Family | None, header: Frame) -> bool:
    """ "Standards S1-S7 + blank in column 1 of plate_2: dye 2-fold, 100 uL final", "prepare
    standards in columns 1 and 2 (duplicates): ...": a heading that says where a dilution
    goes (and in how many replicates), and the dilution under it that names no wells."""
    return (
        frame is not None
        and family is not None
        and family.name == "dilution"
        and header.clause.heading
        and header.ents.fold is None
        and not header.ents.volumes()
        and bool(header.ents.wellsets)
        and bool(CURVE_WORDS.search(header.text))
        and not frame.ents.wellsets
        and not frame.ents.blanks
        and frame.ents.fold is not None
    )


def _alone(text: str, start: int, end: int) -> bool:
    """The name at ``start:end`` is a piece of its own between commas ("..., milli-Q water"):
    a role said (the diluent), not a liquid moved ("150 uL water into A1")."""
    before, after = text[:start].rstrip(), text[end:].lstrip()
    return (not before or before.endswith((",", ";"))) and (not after or after[0] in ",;.")


def _where_under(frame: Frame | None, family: Family | None, header: Frame) -> bool:
    """ "8ch 2-fold dilution series of amp in broth: mic_a col 1 -> col 12, 100 uL each": a
    dilution heading that names no wells, and the piece under it that only says where (and
    how much, and how), with no liquid or verb of its own."""
    return (
        frame is not None
        and header.clause.heading
        and header.ents.fold is not None
        and not header.ents.wellsets
        and bool(frame.ents.wellsets)
        and all(_alone(frame.text, m.start, m.end) for m in frame.ents.liquids)
        and frame.ents.fold is None
        and not _VERB_START.match(frame.text)
        and (family is None or family.name in ("transfer", "context", "chain"))
        and not any(w.chain for w in frame.ents.wellsets)
    )


def _keeps_excess(frame: Frame, family: Family | None, head: Frame) -> bool:
    """ "... 150 uL final. Don't discard the excess from the last well.": how the series ends,
    said in its own sentence or piece right after it."""
    return (  # ("leave the extra in A6" reads as an incubation: no time, no temperature)
        (family is None or (family.name == "incubate" and frame.duration is None))
        and bool(KEEP_EXCESS.search(frame.text))
        and 0
        <= frame.clause.sentence - max([head.clause.sentence, *(c.sentence for c in _folded(head))])
        <= 1
        and not frame.ents.liquids
        and not frame.ents.volumes()
    )


def _merge_fragments(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """Join the verbless pieces of a serial-dilution sentence to it, read as one clause."""
    read_in = fold_into_previous(
        read_in, lex, norm, "context", _places_for, heading=False, becomes="dilution"
    )
    read_in = fold_into_previous(read_in, lex, norm, "context", _stock_under, becomes="context")
    read_in = fold_into_previous(read_in, lex, norm, "context", _fold_under, becomes="dilution")
    read_in = ratio_headings(read_in, lex, norm)  # "10X TBS-T to 1X: 1 mL into X A1-A4 ..."
    # "Standards on P: top standard in A3, then 2-fold down to G3, ...": a curve's first well
    read_in = fold_into_previous(
        read_in, lex, norm, None, after_top, then_sep=True, becomes="dilution"
    )
    read_in = fold_into_previous(  # "top standard in A1 (X, 300 uL), then 2-fold down to G1"
        read_in, lex, norm, "transfer", top_poured, then_sep=True, becomes="dilution"
    )
    read_in = fold_into_previous(  # "elisa_p1, col 1. X = stock, 2x serial, ...": where first
        read_in, lex, norm, None, place_before, becomes="dilution"
    )

    filled = {  # liquids the request pours itself: a spelled-out dilution fills its own wells
        m.name
        for f, fam in read_in
        if f is not None and fam is not None and fam.name == "transfer"
        for m in f.ents.liquids
    }

    def joins(frame: Frame, family: Family | None, head: Frame) -> bool:
        return (
            _fragment(frame, family, head)
            or (  # "... along row C, 8 wells, 200 uL BSA standard in C1, 100 uL moved each time"
                _stock_first(frame, head)
                and frame.clause.sentence == head.clause.sentence
                and not filled - {m.name for m in frame.ents.liquids}
            )
            or _completes(frame, family, head)
            or under_heading(frame, family, head)
            or _where_under(frame, family, head)
            or _fold_under(frame, family, head)
            or _keeps_excess(frame, family, head)
        )

    return fold_into_previous(read_in, lex, norm, "dilution", joins, then_sep=True, heading=False)
