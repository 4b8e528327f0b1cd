"""Destination plates said before the move that fills them: "In duplicate onto growth_plate and
glyc_plate: stamp 10 uL of every well of ON_culture", "Daughter plates: DB-1, DB-2. Stamp MB-3
into them" - the plates the lead-in names are where the next move goes when it names none; and
a copy asked for in one sentence and detailed in the next ("Could you make a daughter plate of
my samples? 15 uL from each well into dest_plate.") - one clause."""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._reading import Read, _folded, _read, fold_into_previous
from agents.task.planning.families import Family
from agents.task.planning.families._places import _copies
from agents.task.planning.families._recognise import VERBS

_FLAGS = re.IGNORECASE
# "In duplicate onto X and Y", "onto X", "into X, Y": a lead-in that only says where to
_ONTO = re.compile(
    r"^\s*(?:(?:in\s+(?:duplicate|triplicate|quadruplicate)|twice|x\s*[2-4])\s*,?\s*)?"
    r"(?:onto|into|to)\b"
    # "Daughter plates DP-07a and DP-07b: ...": the plates named after what they are for
    r"|^\s*(?:the\s+)?(?:daughter|destination|dest|target|replica|receiving|copy)\s+(?:plates?|blocks?)\b",
    _FLAGS,
)
# "Daughter plates:", "Destinations:", "Target plates:", "Copies to:": a label that says where to
_DEST_LABEL = re.compile(
    r"^\s*(?:(?:daughter|destination|dest|target|replica|copy|output|receiving)\s*(?:plates?|s)?"
    r"|copies(?:\s+(?:to|onto|into))?)\s*$",
    _FLAGS,
)


def _said_dests(frame: Frame, family: Family | None) -> bool:
    """A clause that names plates (no wells) only to say they receive: nothing else in it."""
    if family is None or family.name not in ("context", "remark") or not frame.places:
        return False
    if any(pl.labware is None or pl.wells is not None for _, pl in frame.places):
        return False
    if frame.ents.volumes() or frame.ents.liquids:
        return False
    label = frame.clause.label or ""
    return bool(_ONTO.match(frame.text)) or (
        bool(_DEST_LABEL.match(label)) and frame.clause.joined == "start"
    )


def dests_first(read_in: list[tuple[Frame | None, Family | None]]) -> None:
    """Give the plates a lead-in says receive to the move right after it when that move names
    no destination (and never one of those plates as what it takes from)."""
    _wells_first(read_in)
    for i, (said, fam) in enumerate(read_in[:-1]):
        if said is None or not _said_dests(said, fam):
            continue
        nxt, nxt_fam = read_in[i + 1]
        if nxt is None or nxt_fam is None or nxt_fam.name != "transfer":
            continue
        if any(role == "dest" for role, _ in nxt.places):
            continue
        plates = {pl.labware.name for _, pl in said.places if pl.labware is not None}
        if any(pl.labware is not None and pl.labware.name in plates for _, pl in nxt.places):
            continue  # the move names one of them itself: it says its own roles
        nxt.places += [("dest", pl) for _, pl in said.places]


def _details(frame: Frame, family: Family | None, head: Frame) -> bool:
    """A sentence with no verb that gives a copy asked for just before it its volume and its
    destination, and names nothing it takes from ("15 uL from each well into dest_plate")."""
    return (
        frame.clause.joined == "sentence"
        and frame.clause.sentence == head.clause.sentence + 1
        and (family is None or family.name == "transfer")
        and _copies(head)
        and not head.ents.volumes()
        and not any(role == "dest" for role, _ in head.places)
        and bool(frame.ents.volumes())
        and not VERBS.match(frame.text)
        and not frame.ents.liquids
        and (  # (a copy that names no plate: "Create a replica plate. 10 uL from X into Y.")
            not head.places
            or all(role == "dest" for role, pl in frame.places if pl.labware is not None)
        )
    )


def copy_details(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """A copy and the verbless sentence after it that details it, read as one clause."""
    return fold_into_previous(read_in, lex, norm, "transfer", _details)


# "ON_culture -> glyc_plate, 10 uL", "then ON_culture to glyc_plate": a plate, then a plate
_PLATE_TO_PLATE = re.compile(r"^(?:then\s+)?\S+\s*(?:->|\bto\b|\binto\b|\bonto\b)\s*\S+", _FLAGS)


# "Create a replica plate. 10 uL from X into Y": the copy's amount, source and destination
_FROM_INTO = re.compile(r"^[\d.]+\s*[uµm]l\s+(?:from|of)\s+\S+\s+(?:to|into|onto|->)\s", _FLAGS)


def copy_carried(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """A verbless plate-to-plate move after a copy ("Stamp X -> Y, 10 uL; then X -> Z, 10 uL")
    copies too: read again with the verb the copy before it said."""
    out: Read = []
    for frame, fam in read_in:
        prev = out[-1][0] if out else None
        if (
            frame is not None
            and prev is not None
            and (fam is None or fam.name == "transfer")
            and _copies(prev)
            and not _copies(frame)
            and not VERBS.match(frame.text)
            and (
                _PLATE_TO_PLATE.match(frame.text)
                or (not prev.places and _FROM_INTO.match(frame.text))
            )
            and len(frame.places) == 2
            and all(pl.labware is not None and pl.wells is None for _, pl in frame.places)
            and not frame.ents.liquids
        ):
            again, got = _read(
                replace(frame.clause, text=f"stamp {frame.clause.text}"), lex, norm.quoted
            )
            if again is not None and got is not None and got.name == "transfer":
                out.append((again, got))
                continue
        out.append((frame, fam))
    return out


def _wells_first(read_in: list[tuple[Frame | None, Family | None]]) -> None:
    """ "Onto agar_96 column 1, spot 2 uL of each culture in S column 1": a lead-in of no verb
    that names one plate's wells to go onto is the destination of the move after it (folded
    into that move), when that move names no destination of its own."""
    for i in range(len(read_in) - 2, -1, -1):
        said, fam = read_in[i]
        nxt, nxt_fam = read_in[i + 1]
        if said is None or fam is not None or nxt is None or nxt_fam is None:
            continue
        if nxt_fam.name != "transfer" or any(role == "dest" for role, _ in nxt.places):
            continue
        if not _ONTO.match(said.text) or said.ents.volumes() or said.ents.liquids:
            continue
        if (
            len(said.places) != 1
            or said.places[0][1].labware is None
            or not said.places[0][1].wells
        ):
            continue
        if said.clause.sentence != nxt.clause.sentence:
            continue
        nxt.places += [("dest", said.places[0][1])]
        nxt.extra["folded"] = [said.clause, *_folded(nxt)]
        del read_in[i]
