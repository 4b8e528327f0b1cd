"""How a clause is recognised as liquid moved between wells: by its verb ("add", "stamp",
"backfill"), or without one by what it names ("200 uL dye into A1", "B1 gets 200 uL dye",
"CAMHB into B1-B12 of MIC_P1": a lab liquid, then the wells it goes into)."""

from __future__ import annotations

import re

from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning.families import _amounts as am
from agents.task.planning.families._places import (
    _GETS,
    _LABEL_VERBS,
    _PER_WELL,
    _SAME_WELLS,
    NEXT_LIQUID,
    WITH_VERB,
)

_FLAGS = re.IGNORECASE
VERBS = re.compile(
    r"^(?:transfer|add|dispense|distribute|aliquot|pipette|pipet|put|place|fill|move|stamp|get|"
    r"replicate|copy|pool|combine|consolidate|spot|cherry[\s-]?pick|hit[\s-]?pick|load|deliver|"
    r"plate\s+out|split|divide|dispence|take|seed|array|reformat|duplicate|clone|mirror|refill|replica[\s-]?plate|re-?array|"
    r"replenish|re-fill|back-?fill|pop|replace(?=\s+(?:it\s+|them\s+|each\s+|the\s+wells?\s+)?with\b))\b",
    _FLAGS,
)
_INTO = re.compile(r"\b(?:into|to|in|onto)\b|->", _FLAGS)
_IN = re.compile(r"\b(?:in|into|back|on\s+top)\b", _FLAGS)
_GERUND = re.compile(
    r"^(?:filling|adding|putting|dispensing|transferring|(?:pre-?)?fill(?:ed)?\s+with)\b", _FLAGS
)


def detect(clause: Clause, ents: Entities) -> int | None:
    """How strongly a clause reads as a transfer (None: it does not)."""
    text = ents.text
    if (
        VERBS.match(text)
        or _GERUND.match(text)
        or (WITH_VERB.match(text) and (ents.liquids or ents.wellsets or len(ents.labware) > 1))
    ):
        has_liquid = ents.volumes() or ents.liquids or ents.vague or ents.bare or ents.wellsets
        if re.match(r"^(?:move|take|put|place|transfer|get)\b", text, _FLAGS) and not (
            has_liquid or am.WHOLE.search(text) or (clause.heading and _SAME_WELLS.search(text))
        ):
            return None  # "transfer amp_plt to the cycler": the plate moves
        return 40
    has_volume = ents.volumes() or ents.vague
    places = ents.wellsets or ents.labware
    if has_volume and places and (ents.liquids or _GETS.search(text) or _INTO.search(text)):
        return 30  # "200 uL dye into A1", "B1 gets 200 uL dye": a transfer without its verb
    if has_volume and ents.liquids and (_IN.search(text) or NEXT_LIQUID.match(_named(ents))):
        return 28  # "140 uL fresh medium in" under a heading; "..., 15 min RT, 50 uL stop solution"
    per_well = (ents.wellsets and ents.labware) or (ents.liquids and not places)
    if has_volume and per_well and _PER_WELL.search(text):
        return 27  # "100 uL/well, elisa_plate B1:B12"; "then 50 uL stop solution/well"
    if not has_volume and places and _liquid_into_wells(ents):
        return 26  # "CAMHB into B1-B12 of MIC_P1": a transfer whose volume is not said
    arrows = text.count("->")
    if arrows and (ents.volumes() or (clause.label and _LABEL_VERBS.search(clause.label))):
        return 30
    if arrows and len(ents.labware) > 1 and _SAME_WELLS.search(text):
        return 30  # "MP-07 -> DP-07a, same layout": how much is the question
    if clause.label and _LABEL_VERBS.search(clause.label) and ents.wellsets:
        return 25
    if clause.heading and ents.liquids and ents.labware and _names_only(ents):
        return 24  # "amp_plate per-well NFW:" over "A1 10 uL, A2 9 uL": the liquid and plate
    return None


def _named(ents: Entities) -> str:
    """The clause with its liquids' names as plain words ("2N H2SO4" holds no well "H2")."""
    text = ents.text
    for m in sorted(ents.liquids, key=lambda m: -m.start):
        text = text[: m.start] + "liquid".ljust(m.end - m.start, "x") + text[m.end :]
    return text


_FILLER = re.compile(
    r"^[\s,()/:-]*(?:(?:per[\s-]?well|volumes?|amounts?|additions?|map|list|layout|"
    r"plate|for|in|into|on|to|the)\b[\s,()/:-]*)*$",
    _FLAGS,
)


def _names_only(ents: Entities) -> bool:
    """The clause names lab liquids and labware and nothing else (a heading over volumes)."""
    text = ents.text
    spans = [(m.start, m.end) for m in (*ents.liquids, *ents.labware)]
    for a, b in sorted(spans, reverse=True):
        text = text[:a] + " " + text[b:]
    return bool(_FILLER.match(text))


_INTO_WELLS = re.compile(r"^[\s,]*(?:(?:into|to|onto|across|along|throughout)\b|->)", _FLAGS)


# "I need buffer across row A", "I'd like dye in A1-A6": a wish for a liquid in wells (with the
# wish said, "in" is where it should go, never what a well already holds)
_WISH = re.compile(
    r"^(?:(?:i|we)(?:\s+(?:really|just|also))?(?:\s+need|\s+want|'d\s+like|\s+would\s+like)|"
    r"(?:can|could)\s+(?:i|we)\s+(?:have|get))\s+(?:some\s+|the\s+|a\s+bit\s+of\s+)?$",
    _FLAGS,
)
_IN_WELLS = re.compile(r"^[\s,]*(?:in|into|to|onto|across|along|throughout)\b", _FLAGS)


def _liquid_into_wells(ents: Entities) -> bool:
    """A lab liquid named first, then "into" the wells: "ethanol into clean_dw B1-B12"; or
    wished for in them: "I need buffer across row A"."""
    first = ents.liquids[0] if ents.liquids else None
    if first is None or not first.sure:
        return False
    wish = first.start > 0 and _WISH.match(ents.text[: first.start])
    if first.start > 0 and not wish:
        return False
    rest = ents.text[first.end :]
    places = [w.start for w in ents.wellsets] + [m.start for m in ents.labware]
    into = _IN_WELLS if wish else _INTO_WELLS
    return bool(into.match(rest)) and all(at >= first.end for at in places)
