"""How a clause is recognised as a normalisation: its verb ("normalise", "bring ... to"), a
level reached from each sample's ("A1-C1 at 8, 4, 16 nM -> 2 nM"), a volume made at a level
from each sample ("make 40 uL of 4 ng/uL from each of ..."), or a mass taken from each."""

from __future__ import annotations

import re

from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning.families import _concentrations as conc

_FLAGS = re.IGNORECASE
_VERB = re.compile(
    r"^(?:please\s+)?(?:normali[sz]e|equali[sz]e|dilute|adjust|bring)\b|\bnormali[sz]|\bnorm\b(?!_)",
    _FLAGS,
)
_TAKE = re.compile(
    r"^(?:take|transfer|move|pipette|put|add|aliquot|dispense|pool|combine|consolidate|merge)\b",
    _FLAGS,
)
_NAMED = re.compile(r"\bnormali[sz]|\bequali[sz]|\bnorm\b(?!_)", _FLAGS)  # "gDNA norm:"
# "take X A1-D1 to 2 nM", "get them all to 10 ng/uL": wells taken to a concentration
_TAKE_TO = re.compile(
    rf"^(?:please\s+)?(?:take|get)\b[^;]*?\bto\s+(?:a\s+)?(?:final\s+|uniform\s+|common\s+)?"
    rf"(?:conc(?:entration)?\s+(?:of\s+)?)?~?{conc.CONC.pattern}",
    _FLAGS,
)
# "make 40 uL of 4 ng/uL from each of A1-C1 (20, 40, 80 ng/uL)": a final volume at a level
_MAKE_LEVEL = re.compile(
    rf"^(?:please\s+)?(?:make|prepare|prep)\s+(?:up\s+)?\d+(?:\.\d+)?\s*u[lL]\s+(?:each\s+)?"
    rf"(?:of|at)\s+(?:a\s+)?{conc.CONC.pattern}",
    _FLAGS,
)
_ARROW_LEVEL = re.compile(rf"->\s*~?{conc.CONC.pattern}", _FLAGS)
_SAMPLES_AT = re.compile(rf"\beach\b|\([^()]*{conc.CONC.pattern}[^()]*\)", _FLAGS)
# "make a pool of 50 ng from each", "equimolar: 5 fmol of each"
_POOL = re.compile(r"\b(?:pool|equimolar|equal[\s-]mass)\b", _FLAGS)


# "5, 12 and 8 uL": a list of numbers closed by one volume unit (the first number stands
# alone: in "A1-C1, 20 uL final" or "column 1, 20 uL final" the 1 is a well's)
_VOLUME_LIST = re.compile(
    r"(?<![\w.])(?<!column )(?<!col )(?<!row )\d+(?:\.\d+)?\s*(?:,|\band\b)\s*"
    r"(?:\d+(?:\.\d+)?\s*(?:,|\band\b)\s*)*\d+(?:\.\d+)?\s*(?:u[lL]|µ[lL])\b"
)


def _adds_listed(ents: Entities) -> bool:
    """ "Normalise C1-C3 to 10 mM by adding DMSO: 5, 12 and 8 uL": the volumes to add are
    given well by well and no well's concentration is, so the target only says why."""
    text = ents.text
    if not (len(ents.volumes()) >= 2 or _VOLUME_LIST.search(text)):
        return False
    level = conc.target(text)
    names = [(m.start, m.end) for m in ents.liquids]
    others = [
        m
        for m in conc.CONC.finditer(text)
        if (level is None or not level.start <= m.start(1) < level.end)
        and not any(a <= m.start() < b for a, b in names)
    ]
    return not others and conc.mass(text) is None


def detect(clause: Clause, ents: Entities) -> int | None:
    text = ents.text
    if _adds_listed(ents):
        return None  # a transfer of the listed volumes
    label = clause.label or ""
    said = _VERB.search(text) or _VERB.search(label)  # ("Normalise: A1 (12 ng/uL)...")
    if said and (conc.target(text) is not None or conc.mass(text) is not None):
        # "normalise ... to 4 nM in 20 uL of 10 mM Tris-HCl": the verb says it, never a 1:N
        # ratio read off the diluent's own strength
        return 82 if _NAMED.search(text) or _NAMED.search(label) else 80
    if _ARROW_LEVEL.search(text) and len(conc.CONC.findall(text)) > 1:
        return 80  # "libs_in A1-C1 at 8, 4 and 16 nM -> 2 nM each, 20 uL, TE, ..."
    if _MAKE_LEVEL.match(text) and (_SAMPLES_AT.search(text) or _strength_unnamed(ents)):
        return 80  # (each sample's level said too: never one stock made up to it)
    if _TAKE_TO.match(text) or _TAKE_TO.match(label):
        return 80  # "take dna_plate B1-D1 to 2 nM in 30 uL": a plate's wells brought to a level
    amount = conc.mass(text)
    if amount is not None and (
        _TAKE.match(text)
        # ("I need) 50 ng of each gDNA (A1-C1: 25, 10, 50 ng/uL) in 20 uL": the amount first
        or ((_TAKE.match(label) or _POOL.search(text) or amount.start == 0) and conc.said(text))
    ):
        return 80  # "take 50 ng of each library (A1 25 ng/uL, ...) into ...", "pool 10 ng each"
    return None


def _strength_unnamed(ents: Entities) -> bool:
    """No liquid named with its own strength ("cpd X-17 10 mM": a ratio by its name), and
    wells to take from: each sample's level is the question."""
    return bool(ents.wellsets) and not any(conc.CONC.search(m.name) for m in ents.liquids)
