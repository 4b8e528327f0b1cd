"""Repeats: "..., then do the same for row B", "Same for B1-B8." - the clauses said before,
again, with the places the repeat names put in place of their own."""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._frames import Frame
from agents.task.planning._reading import _reread
from agents.task.planning._wellsets import WellSet
from agents.task.planning.families import Family

_SAME = re.compile(
    r"^(?:(?:do|repeat)\s+)?(?:the\s+)?(?:same|this|that|it)(?:\s+again)?\s+(?:for|to|with|in|on|into|onto)\b"
    r"|^repeat\s+(?:for|with|on|in|into|to)\b|^(?:again|likewise)\s+(?:for|to|in|into|on|with)\b"
    # "do plate_2 the same way", "treat row B likewise"
    r"|^(?:do|treat|handle|fill)\s+[^,;]{1,30}?\s+(?:(?:in\s+)?the\s+same(?:\s+way)?|likewise|"
    r"similarly)\W*$",
    re.IGNORECASE,
)


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
