"""Repeats: "..., then do the same for row B", "Same for B1-B8." - the clauses said before,
again, with the places the repeat names put in place of their own."""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._frames import Frame, Place
from agents.task.planning._reading import _reread
from agents.task.planning._wellsets import WellSet
from agents.task.planning.families import Family

# what a bare repeat names first: wells, rows, columns or a plate id ("plate_2", "rxn_96b")
_PLACES = r"(?=(?:the\s+)?(?:rows?|columns?|cols?|wells?|[A-Pa-p]\d{1,2}|[\w-]*(?:\d|_)[\w-]*)\b)"
_SAME = re.compile(
    r"^(?:(?:do|repeat)\s+)?(?:the\s+)?(?:same|this|that|it)(?:\s+again)?\s+(?:for|to|with|in|on|into|onto)\b"
    r"|^(?:then\s+)?repeat\s+(?:for|with|on|in|into|onto|to)\b"
    r"|^(?:again|likewise)\s+(?:for|to|in|into|onto|on|with)\b"
    # "do plate_2 the same way", "treat row B likewise"
    r"|^(?:do|treat|handle|fill)\s+[^,;]{1,30}?\s+(?:(?:in\s+)?the\s+same(?:\s+way)?|likewise|"
    r"similarly)\W*$",
    re.IGNORECASE,
)

# "also B1 and C1", "column 2 as well", "plate_2 A1-A4 too", "row B gets the same": only
# places, said to take what the clause before did (read in the clause as written: the cleaned
# text has lost its "also")
_ALSO = re.compile(
    rf"^(?:(?:and|then)\s+)*also\s+(?:(?:in(?:to)?|to|for|on)\s+)?{_PLACES}[^,;]{{0,60}}$"
    rf"|^(?:(?:and|then)\s+)*(?:(?:in(?:to)?|to|for|on)\s+)?{_PLACES}[^,;]{{0,60}}?\s+"
    r"(?:as\s+well|too|likewise|gets?\s+the\s+same(?:\s+(?:volume|amount|treatment))?)\W*$"
    rf"|^{_PLACES}[^,;:]{{0,60}}?\s*[:=-]\s*(?:the\s+)?same(?:\s+(?:volume|amount|again))?\W*$"
    # "2) repeat for row B / 3) and row C": nothing but places after "and"
    r"|^(?:and|then|plus)\s+(?:(?:the|rows?|columns?|cols?|wells?|and|of|on|in|[A-Pa-p]\d{0,2}"
    r"|\d{1,2}|[\w-]*[\d_][\w-]*)(?:\s*[-–,&]\s*|\s+|$))+$",
    re.IGNORECASE,
)


def repeats(frame: Frame, out: list[tuple[Frame, Family]]) -> bool:
    """A clause that says to do the clause before again, for its own places; "also B1" after
    two moves said together ("buffer to A1 and dye to A2; also B1") does not say which."""
    if _SAME.match(frame.text):
        return True
    if not out or not (_ALSO.match(frame.clause.said.strip(" .;,")) or _plate_again(frame)):
        return False
    last = out[-1][0]
    return not any(
        f.clause.sentence == last.clause.sentence and f.extra.get("kind") != "setting"
        for f, _ in out[:-1]
    )


# "Also into qc.", "qc too", "and qc as well": a plate (whatever its id) said to get the same
_REPEAT_WORD = re.compile(r"\balso\b|\btoo\b|\bas\s+well\b", re.IGNORECASE)
_FILLER = re.compile(
    r"\b(?:also|too|as\s+well|and|then|in(?:to)?|on(?:to)?|to|for|the|please)\b", re.IGNORECASE
)


def _plate_again(frame: Frame) -> bool:
    """The piece names only lab plates (and their wells) and says they get it too."""
    ents = frame.ents
    if not ents.labware or ents.quantities or ents.liquids:
        return False
    if not _REPEAT_WORD.search(frame.clause.said):
        return False
    spans = [(m.start, m.end) for m in ents.labware] + [(w.start, w.end) for w in ents.wellsets]
    text = ents.text
    for a, b in sorted(spans, reverse=True):
        text = f"{text[:a]} {text[b:]}"
    return not _FILLER.sub(" ", text).strip(" .;,!:-")


def _again_before(frame: Frame, out: list[tuple[Frame, Family]]) -> list[tuple[Frame, Family]]:
    """The liquid moves said with the clause before in its sentence ("aspirate 100 uL, add
    100 uL medium. Same for row B."): each again for the new places, or none of them."""
    last = out[-1][0]
    said: list[Frame] = []
    for earlier, family in reversed(out[:-1]):
        if (
            earlier.clause.sentence != last.clause.sentence
            or earlier.extra.get("kind") == "setting"
        ):
            break
        if family.name not in ("transfer", "volumes") or last.extra.get("kind") == "setting":
            return []
        said.insert(0, earlier)
    again = [_again(frame, f) for f in said]
    return [a for a in again if a is not None] if all(again) else []


def _again(frame: Frame, prev: Frame) -> tuple[Frame, Family] | None:
    """The clause before, with the places, liquid and volume this one names put in place of
    its own ("...; do the same with dye in B1-B6", "then the same with 50 uL buffer")."""
    ents = frame.ents
    lab = ents.labware[0] if ents.labware else None
    wells = ents.wellsets[0] if ents.wellsets else None
    if lab is None and wells is None:
        return _other_liquid(frame, prev, prev.clause.text, []) if ents.liquids else None
    if (pair := _both_places(frame, prev)) is not None:
        return _other_liquid(frame, prev, prev.clause.text, pair)  # "same for X B1 into Y B1-B3"
    place = next((pl for pl in (prev.dest, prev.head, prev.source) if not pl.empty), prev.head)
    text = prev.clause.text
    if place.empty and prev.family == "transfer" and not prev.places:
        where = " ".join(x.text if isinstance(x, WellSet) else x.written or x.name
                         for x in (lab, wells) if x is not None)  # fmt: skip
        return _reread(replace(frame.clause, text=f"{text} to {where}"), prev)  # "add 100 uL X"
    if place.empty and (same := re.search(r"\bthe\s+same\s+wells\b", text, re.IGNORECASE)):
        where = " ".join(x.text if isinstance(x, WellSet) else x.written or x.name
                         for x in (lab, wells) if x is not None)  # fmt: skip
        return _reread(
            replace(frame.clause, text=text[: same.start()] + where + text[same.end() :]), prev
        )
    edits: list[tuple[int, int, str]] = []
    if wells is not None:
        src = prev.source.wells if place is prev.dest else None
        if src is not None and [p.kind for p in src.parts] != ["well"]:
            # "10 uL from cpd A1-A12 to rxn A1-A12; same for row B": well to the same well,
            # both moved; from other wells, which source wells the repeat takes is not said
            if _spelled(src) != _spelled(place.wells):
                return None
            edits.append((src.start, src.end, wells.text))
        if place.wells is not None:
            edits.append((place.wells.start, place.wells.end, wells.text))
        elif place.labware is not None:
            edits.append((place.labware.end, place.labware.end, f" {wells.text}"))
        else:
            return None
    if lab is not None:
        if place.labware is None:
            return None
        edits.append((place.labware.start, place.labware.end, lab.written or lab.name))
    return _other_liquid(frame, prev, text, edits)


def _both_places(frame: Frame, prev: Frame) -> list[tuple[int, int, str]] | None:
    """The edits that put a repeat's own source and destination (plate and wells each) in
    place of the clause before's, or None when either says less."""
    source = frame.source
    if source.empty and len(frame.ents.labware) == 2 and len(frame.ents.wellsets) == 2:
        # "same for cpd B1 into rxn B1-B3": the place after "for" is where it comes from
        source = Place(
            next(m for m in frame.ents.labware if m is not frame.dest.labware),
            next(w for w in frame.ents.wellsets if w is not frame.dest.wells),
        )
    said = (source, frame.dest, prev.source, prev.dest)
    if not all(p.labware is not None and p.wells is not None for p in said):
        return None
    edits = []
    for new, old in ((source, prev.source), (frame.dest, prev.dest)):
        lab, wells = new.labware, new.wells
        assert lab is not None and wells is not None and old.labware and old.wells
        edits.append((old.labware.start, old.labware.end, lab.written or lab.name))
        edits.append((old.wells.start, old.wells.end, wells.text))
    return edits


def _spelled(wells: WellSet | None) -> str:
    return re.sub(r"\s+", "", wells.text).upper() if wells is not None else ""


def _other_liquid(
    frame: Frame, prev: Frame, text: str, edits: list[tuple[int, int, str]]
) -> tuple[Frame, Family] | None:
    """The clause before with ``edits`` and the liquid and volume this one names in place of
    its own; None when it names a liquid the clause before did not write to replace."""
    said, named = prev.liquid, frame.ents.liquids[0] if frame.ents.liquids else None
    if named is not None and (said is None or said.name != named.name):
        if said is None or said.end <= said.start:
            return None  # the liquid before is not written in its clause: nothing to replace
        edits.append((said.start, said.end, named.written or named.name))  # "same with dye"
    if frame.volume is not None and prev.volume is not None:  # "the same with 20 uL dye"
        edits.append((prev.volume.start, prev.volume.end, frame.volume.text))
    for a, b, new in sorted(edits, reverse=True):
        text = text[:a] + new + text[b:]
    return _reread(replace(frame.clause, text=text), prev)
