"""A destination said in brackets after what is copied: "ON_culture A1 in triplicate
(growth_plate A1, A2, A3)", "two daughter plates from MP-07 (DP-07a and DP-07b)". Only when
the clause names no destination otherwise and the brackets hold nothing but places on other
labware than the one before them ("samples (A1-A6)" and "reservoir (buffer)" say where or what
the source is). The mirror: a source said in brackets after where the liquid goes ("spot 2 uL
of each culture onto agar_96 A1-A6 (ON_strains A1-A6)"), when the clause names no source."""

from __future__ import annotations

import re

from agents.task.planning._entities import Entities

_FLAGS = re.IGNORECASE
_BRACKET = re.compile(r"\(([^()]{1,80})\)")
_JOINS = re.compile(r"[\W_]+|\b(?:and|the|of|in|on|at|plates?|wells?|into|onto|to)\b", _FLAGS)


def dest_in_brackets(ents: Entities, cuts: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Role cuts that make a bracketed place list the destination (none: [])."""
    if any(role == "dest" for _, role in cuts) or "(" not in ents.text:
        return []
    return _places_in_brackets(ents, cuts, "dest")


def source_in_brackets(ents: Entities, cuts: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Role cuts that make a bracketed place list, after a destination, the source (none: [])."""
    if any(role == "source" for _, role in cuts) or "(" not in ents.text:
        return []
    first_dest = min((at for at, role in cuts if role == "dest"), default=None)
    if first_dest is None or not any(lw.start >= first_dest for lw in ents.labware):
        return []
    return _places_in_brackets(ents, cuts, "source", after=first_dest)


# "onto agar_96 in the same layout (ON_strains A1-H2)": how the copy lies, then its source
_SAME_LAYOUT = re.compile(
    r"\s*,?\s*(?:(?:in|into|at|with|using|keeping)\s+)?(?:the\s+)?same\s+"
    r"(?:layout|positions?|wells?|pattern|arrangement|map)\s*",
    _FLAGS,
)


def _right_after_place(ents: Entities, at: int) -> bool:
    """The bracket opening at ``at`` follows a named labware or well set directly ("onto
    agar_96 A1-A6 (...)", "onto agar_96 in the same layout (...)"; not "into both daughter
    blocks (...)", which says them again)."""
    ends = [x.end for x in ents.labware if x.end <= at]
    ends += [w.end for w in ents.wellsets if w.end <= at]
    between = ents.text[max(ends) : at] if ends else ""
    return bool(ends) and (not between.strip() or bool(_SAME_LAYOUT.fullmatch(between)))


def _places_in_brackets(
    ents: Entities, cuts: list[tuple[int, str]], role_inside: str, after: int = 0
) -> list[tuple[int, str]]:
    text = ents.text
    for m in _BRACKET.finditer(text, after):
        inside = [lw for lw in ents.labware if m.start(1) <= lw.start < m.end(1)]
        before = {lw.name for lw in ents.labware if lw.end <= m.start()}
        if not inside or not before or before & {lw.name for lw in inside}:
            continue
        if role_inside == "source" and not _right_after_place(ents, m.start()):
            continue
        said = list(m.group(1))
        spans = [(x.start, x.end) for x in ents.labware] + [(w.start, w.end) for w in ents.wellsets]
        for a, b in spans:
            for i in range(max(a, m.start(1)), min(b, m.end(1))):
                said[i - m.start(1)] = " "
        if _JOINS.sub("", "".join(said)):
            continue  # "(std_curve, 2 reps)": more than places
        resumes = "head"
        for at, role in sorted(cuts):
            if at <= m.start():
                resumes = role
        return [(m.start(1), role_inside), (m.end(), resumes)]
    return []
