"""Liquid taken out to waste (media exchange, washes, discarding the excess of a dilution) and
wells topped up to a final volume.

A top-up reads each well's volume from the lab state (or the plan) and adds the difference from
one source, one tip; a well above its target disagrees with the lab: the planner asks. Liquid
sent to waste leaves with its tip, so every well emptied takes a new one.
"""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt
from agents.task.planning.families import Family
from agents.task.planning.families import _amounts as am
from agents.task.planning.families import _concentrations as conc
from agents.task.planning.families import _exchange as ex
from agents.task.planning.families._places import volume_wells as _wells
from agents.task.planning.families._topping import top_up

_FLAGS = re.IGNORECASE
# "wash buffer ..." names a liquid, not a wash
_WASH = re.compile(
    r"^(?:wash|rinse)(?:\b|ing\b|es\b)(?!\s+(?:buffer|solution|soln)\b)(?:\s+(?:step|\d+))?", _FLAGS
)
_DISCARD = re.compile(
    r"\b\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])\s+(?:of\s+)?(?:the\s+)?(?:[a-z]+\s+){0,2}?out\b(?!\s+of)|"
    r"^(?:remove|discard|aspirate|withdraw|take\s+(?:off|out|away)|suck|dump|empty|throw\s+away|"
    r"draw\s+off|pull\s+off|decant|waste)\b|\b(?:to|into|in)\s+(?:the\s+)?(?:waste|trash|bin)\b|\bout\s+to\s+waste\b"
    # "take 50 uL out of A1" (to waste), never "take 5 uL out of res A1 into dil_96 B1" (a move)
    r"|^take\b(?!.*\bout\s+of\b.*\b(?:into|onto|to|in)\s+(?!(?:the\s+)?(?:waste|trash|bin)\b))"
    r".*\bout\s+of\b"
    r"|^(?:take|pull|draw)\b.*\b(?:discard|dump|bin|trash)\s+(?:it|them|that|those)\b"
    r"|^(?:take|pull|draw)\b.*\bthrow\s+(?:it|them)\s+(?:away|out)\b",
    _FLAGS,
)
_EMPTYING = re.compile(
    r"\b(?:all|everything)\b(?:\s+(?:of\s+)?(?:the|it|its))?(?:\s+(?:liquid|medium|media|contents?|"
    r"supernatant|buffer|solution|volume))?\b|\bempty\b"
    r"|^(?:remove|aspirate|discard|take\s+(?:off|out))\s+(?:the\s+|it\b|them\b)"
    r"|^(?:remove|aspirate|discard|take\s+(?:off|out)|suck\s+(?:off|out)|decant|pull\s+off)\s+"
    r"(?:(?:spent|old|used|conditioned|exhausted)\s+)?(?:medium|media|supernatants?|liquid|contents)\b",
    _FLAGS,
)
_TOP_UP = re.compile(
    # (a list of wells may hold commas: "fill X A1, B1 and C1 to 100 uL")
    r"^(?:q\.?s\.?\b|(?:re-?|back-?)?fill\b(?=(?:[^,;]|,\s*(?=[A-Pa-p]\d))*\bto\s+(?:a\s+|the\s+)?"
    r"(?:final\s+|total\s+)?"
    r"(?:volume\s+of\s+)?\d)|"
    r"top(?:[\s-]*(?:up|off))?(?!\s+(?:standard|std|well|point|concentration|row|of)s?\b)|bring|fill\s+up"
    r"|make\s+up|adjust)\b|\btop[\s-]*(?:up|off)\b|\bup\s+to\s+\d",
    _FLAGS,
)


_TOPS = re.compile(  # the verb first, nothing else ("top the wells up": its object between)
    r"(?:top[\s-]*(?:up|off)|q\.?s\.?|top\s+(?:(?:the|all|those|these)\s+)*wells?\s+(?:up|off))\b",
    _FLAGS,
)
_WELLS_SAID = re.compile(r"\b(?:wells?|plates?)\b", _FLAGS)  # "top up the wells": which, to what?
_DRAIN = re.compile(r"^(?:aspirate|empty|drain|evacuate)\b(?!\s+\d)", _FLAGS)
# "discard dna_plate A1-A3", "dump row A to waste", "throw away the contents of X A1-A3": the
# wells named emptied (wells said, nothing carried anywhere but the waste); "remove X A1-A3"
# is a removal too, of an amount to ask
_DISCARD_WELLS = re.compile(
    r"^(?:(?P<all>discard|dump|toss|waste|throw\s+(?:away|out)|get\s+rid\s+of)|remove)\b"
    r"(?!\s+\d)(?!.*\b(?:into|onto|to)\s+(?!(?:the\s+)?(?:waste|trash|bin)\b))"
    r"|^(?P<arrow>(?!.*\b(?:into|onto|to)\s+(?!(?:the\s+)?(?:waste|trash|bin)\b)).*?)"
    r"(?:->|\bto|\binto)\s*(?:the\s+)?(?:waste|trash|bin)\W*$",  # "dw_src row A -> waste"
    _FLAGS,
)
_BARE_REMOVE = re.compile(
    r"^(?:aspirate|remove|discard|suck\s+off|take\s+off)(?:\s+(?:it|them|again|all|everything|"
    r"(?:the\s+)?(?:wash|buffer|pbs|dpbs|liquid|supernatant|medium|media)))?\W*$",
    _FLAGS,
)
_TOP_UP_LABEL = re.compile(
    r"^\s*(?:top[\s-]*(?:up|off)|q\.?s\.?|make[\s-]*up|fill[\s-]*up|bring[\s-]*up)(?:\s+to\s+volume)?\s*$",
    _FLAGS,
)
_REACH = re.compile(
    r"\b(?:so\s+(?:that\s+)?|until\s+)[^,;]*?\b(?:reach(?:es)?|is\s+at|are\s+at|holds?|contains?|has|have)"
    r"\s+(?:a\s+)?(?:final\s+|total\s+)?(?:volume\s+of\s+)?\d"
    r"|\bbring(?:ing)?\s+(?:each|every|all|them|it)\b[^,;]{0,30}\bto\s+\d"
    r"|\bto\s+bring\s+(?:[^,;]|,\s*(?=[A-Pa-p]\d)){0,40}?\bto\s+(?:a\s+)?(?:final\s+|total\s+)?(?:volume\s+of\s+)?\d",
    _FLAGS,
)
# "add buffer to make 100 uL total", "... to give 200 uL per well": the level one liquid
# brings the wells to (not "10 uL stock to 90 uL DMSO to make 100 uL": a recipe)
_MAKE_LEVEL = re.compile(
    r"\bto\s+(?:make|give|get|reach)\s+(?:(?:it|them|each(?:\s+well)?|every\s+well)\s+)?"
    r"(?:up\s+)?(?:to\s+)?(?:a\s+)?(?:final\s+|total\s+)?(?:volume\s+(?:of\s+)?)?\d",
    _FLAGS,
)


def _makes_level(ents: Entities) -> bool:
    return (
        len(ents.volumes()) == 1
        and len({m.name for m in ents.liquids}) <= 1
        and ents.fold is None
        and bool(_MAKE_LEVEL.search(ents.text))
    )


# "add water to dna_plate column 1 to a final volume of 60 uL": the one volume is a level
_ADD_TO_FINAL = re.compile(
    r"^(?:add|dispense|pipette|pipet|put|deliver)\b(?![^;]*\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])\b[^;]*"
    r"\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])\b)[^;]*?(?:\b(?:to|for)\s+(?:a\s+)?(?:final|total)\s+(?:volume\s+)?"
    r"(?:of\s+)?\d|\bto\s+\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])\s+(?:final|total)\b)",
    _FLAGS,
)
_TO_VOLUME = (
    r"\bto\s+(?:a\s+)?(?:final\s+|total\s+)?(?:volume\s+of\s+)?\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])\b"
)
_DILUTE_TO = re.compile(rf"^dilute\b[^,;]*{_TO_VOLUME}(?!\s*(?:of|into|in|each|per)\b)", _FLAGS)
_LIQUID_TO = re.compile(
    rf"^(?:(?:and\s+|then\s+)?(?:add|with)\s+)?(?:[\w.%-]+\s+){{1,3}}?{_TO_VOLUME}\s*(?:each|total|final)?"
    r"(?:\s+(?:in|for)\s+(?:each|every|all)(?:\s+(?:one|wells?|of\s+them|of\s+those))?)?\W*$",
    _FLAGS,
)
_NORMALISE = re.compile(r"\bnormali[sz](?:e|ation)\b", _FLAGS)
_PURPOSE = re.compile(r"^(?:for|to|as\s+part\s+of|before)\s+(?:the\s+|our\s+)?normali", _FLAGS)
# "Normalise dna_plate column 1 to 80 uL with water": every well brought to one volume.
_NORMALISE_TO = re.compile(
    r"^normali[sz]e\b[^:]*?\bto\s+(?:a\s+)?(?:total|final)?\s*(?:volume\s+)?(?:of\s+)?\d+(?:\.\d+)?\s*"
    r"(?:u[lL]|µ[lL]|m[lL])\b(?!\s*(?:of|from|into|per|/))",
    _FLAGS,
)


# "Do a half media change on plate48", "50% medium exchange for row A": what the wells hold.
_MEDIA_CHANGE = re.compile(
    r"\b(?:half|partial|\d+\s*%)[\s-]+(?:media|medium)[\s-]+(?:change|exchange|swap|refresh)\b",
    _FLAGS,
)


def _changes_media(text: str) -> bool:
    """ "A half media change on X" says the whole exchange; "(90 uL out, ..." only its half."""
    return bool(_MEDIA_CHANGE.search(text)) and not re.search(r"\bout\b", text, _FLAGS)


_EXCHANGE = re.compile(
    r"^(?:change|replace|exchange|refresh|swap|renew)\b(?!\s+(?:it\s+|them\s+|each\s+|the\s+wells?\s+)?with\b)"
    r"(?=.*\b(?:media|medium|buffer|supernatant)\b)",  # "replace with ...": the refill alone
    _FLAGS,
)


def _verb_first(ents: Entities) -> bool:
    """ "Wash elisa_a with ...": the first word is the verb, even where a liquid is called
    "wash"; "wash buffer into A1" names the liquid."""
    first = next((q for q in ents.liquids if q.start == 0), None)
    if first is None:
        return True
    return any(0 <= m.start - first.end <= 6 for m in ents.labware) or bool(
        re.match(r"\s+(?:the\s+)?(?:plates?|wells?|rows?|columns?|cols?|[A-Pa-p]\d)\b",
                 ents.text[first.end :], _FLAGS)
    )  # fmt: skip


# "3 washes of 150 uL PBS", "PBS wash x3": a wash said as a noun (not "wash buffer").
_WASH_NOUN = re.compile(
    r"\b(?:\d+|two|three|four|five)\s+(?:washe?s|rinses)\b|\bwash(?:es)?\s*(?:x\s*\d|\d\s*x)\b",
    _FLAGS,
)


# A clause that says its own liquid move under a "Wash:" label is that move, not a wash.
_OWN_MOVE = re.compile(
    r"^(?:remove|discard|aspirate|withdraw|take|add|dispense|transfer|put|pipette|move|pour"
    r"|replace|refill|top)\b",
    _FLAGS,
)


def _washes(clause: Clause, ents: Entities) -> bool:
    text = ents.text
    return bool(
        (_WASH.match(text) and _verb_first(ents))
        or (
            _WASH.fullmatch((clause.label or "").strip())
            and ents.volumes()
            and not _OWN_MOVE.match(text)  # "wash step: remove 10 uL ...": a title over moves
        )
        or (_WASH_NOUN.search(text) and ents.volumes())
    )


def detect(clause: Clause, ents: Entities) -> int | None:
    text = ents.text
    if am.RESIDUAL.search(text) and (
        _DISCARD.search(text) or re.match(r"^(?:take|bring|reduce)\b", text, _FLAGS)
    ):
        return 95  # "take cell_plate row B down to 50 uL": a removal, never a dilution chain
    if (_EXCHANGE.match(text) or _changes_media(text)) and not clause.heading:
        return 73  # "Replace 500 uL of the medium in wells24 row A with fresh growth medium"
    if _washes(clause, ents):
        return 74  # "wash A1:H2 three times with 200 uL wash buffer", "PBS wash x3, 100 uL"
    if _NORMALISE_TO.search(text) and not clause.heading and len(ents.volumes()) < 3:
        return 73  # (with a list of volumes, well by well, the list says what to add)
    if _NORMALISE.search(text) and not ents.volumes() and not clause.heading:
        if _PURPOSE.match(text) and not (ents.wellsets or ents.labware):
            return None  # "For normalisation, add ...": why, not what
        return 72  # "normalise the DNA to 10 ng/uL": to what volumes?
    if _DISCARD.search(text) and (ents.volumes() or ents.vague or ents.bare):
        return 70
    if _DRAIN.match(text) and (ents.wellsets or ents.labware) and not ents.volumes():
        return 70  # "aspirate cell_plate column 5": empty those wells
    if _DISCARD_WELLS.match(text) and ents.wellsets and ents.labware and not ents.volumes():
        return 70  # "discard dna_plate A1-A3": empty those wells
    if _BARE_REMOVE.match(text) or am.IT_OUT.match(text):
        return 70  # "..., aspirate, then add 200 uL": empty the wells worked on
    if _DISCARD.match(text) and (_EMPTYING.search(text) or am.share(text)):
        return 70  # "remove the medium", "remove half of the medium"
    bare_top = _TOPS.match(text) and (ents.labware or ents.wellsets or _WELLS_SAID.search(text))
    if (
        (_TOP_UP.search(text) or _TOP_UP_LABEL.match(clause.label or "") or bare_top)
        and (ents.volumes() or ents.vague or bare_top)
        and not _to_concentration(text)
    ):  # "top-up: dna_plate column 3 -> 80 uL (water)"
        return 72
    if am.EQUAL.search(text) and not ents.volumes() and ents.liquids:
        return 72  # "add an equal volume of water to dna_plate column 3": what each holds
    reaches = bool(
        (_REACH.search(text) or _ADD_TO_FINAL.match(text)) and ents.volumes()
    ) or _makes_level(ents)
    if reaches and not _to_concentration(text):
        return 72  # "add water to column 1 so each well reaches 60 uL": the difference
    if ents.fold is None and len(ents.volumes()) == 1 and _DILUTE_TO.search(text):
        return 74  # "dilute each library in libs A1-A4 to 60 uL with TE": a top-up
    if len(ents.volumes()) == 1 and ents.liquids and not ents.wellsets and _LIQUID_TO.match(text):
        return 72  # "..., plus water to 40 uL": the wells just filled, topped up
    return None


def _to_concentration(text: str) -> bool:
    """ "Add Tris to bring them to 4 nM - A1 12 uL, A2 7.5 uL": the level brought to is a
    concentration, so the volumes are what goes in, never levels to top up to."""
    return conc.target(text) is not None and not re.search(_TO_VOLUME, text, _FLAGS)


def tops_up(frame: Frame) -> bool:
    """The clause is a top-up (what :func:`build` plans as one, so "..., and mix" may join it)."""
    if (
        _EXCHANGE.match(frame.text)
        or _changes_media(frame.text)
        or _washes(frame.clause, frame.ents)
    ):
        return False
    if _NORMALISE.search(frame.text) and not frame.ents.volumes():
        return False
    return bool(
        _TOP_UP.search(frame.text)
        or _TOP_UP_LABEL.match(frame.clause.label or "")
        or _NORMALISE_TO.search(frame.text)
        or _REACH.search(frame.text)
        or _makes_level(frame.ents)
        or _ADD_TO_FINAL.match(frame.text)
        or _DILUTE_TO.search(frame.text)
        or _LIQUID_TO.match(frame.text)
    ) and not _DISCARD.search(frame.text)


def build(frame: Frame, p: r.Planning) -> str:
    if _EXCHANGE.match(frame.text) or _changes_media(frame.text):
        return ex.exchange(frame, p)
    if _washes(frame.clause, frame.ents):
        return ex.wash(frame, p)
    if _NORMALISE.search(frame.text) and not frame.ents.volumes():
        raise Ask(
            "Normalising needs the volume to add to (or take from) each well: which volumes, "
            "well by well (e.g. A1 5 uL, B1 10 uL)?",
            ["volume"],
            ["A1 5 uL, B1 10 uL, ...", "top up to a final volume"],
        )
    if am.EQUAL.search(frame.text) and not frame.ents.volumes():
        plate, wells = _wells(frame, p, "add to")
        return am.equal(frame, p, plate, wells)
    if tops_up(frame):
        return top_up(frame, p)
    before = dict(p.world.volume)
    said = _discard(frame, p)
    after = p.world.volume  # what each well gave, for "... and replace with fresh medium"
    p.removed = {
        k: round(v - after.get(k, 0.0), 4)
        for k, v in before.items()
        if v - after.get(k, 0.0) > 1e-6
    }
    return said


def _discard(frame: Frame, p: r.Planning) -> str:
    world = p.world
    plate, wells = _wells(frame, p, "take liquid from")
    if (left := am.RESIDUAL.search(frame.text)) is not None:
        return am.down_to(
            frame, p, plate, wells, float(left["v"]) * (1000 if left["u"][0] in "mM" else 1)
        )
    if frame.volume is None and frame.total is None and (part := am.share(frame.text)):
        return am.part_out(frame, p, plate, wells, part)  # "remove 90% of the medium"
    if am.IT_OUT.match(frame.text):
        am.only_what_went_in(world, plate, wells)  # "take it back out to waste"
        return _empty(frame, p, plate, wells)
    if (
        frame.volume is None
        and frame.total is None
        and (
            _EMPTYING.search(frame.text)
            or _DRAIN.match(frame.text)
            or _BARE_REMOVE.match(frame.text)
            or (
                (dumped := _DISCARD_WELLS.match(frame.text))
                and dumped.group("all", "arrow") != (None, None)
            )
        )
    ):
        return _empty(frame, p, plate, wells)
    volume = r.quantity(
        frame.volume or frame.total, frame, "How many uL should I take out of each well?", "volume"
    )
    if volume == 0:
        raise Refuse("taking 0 uL out does nothing", "nothing_to_do")
    r.positive_volume(volume, f"{volume:g} uL")
    channels = frame.ents.channels or p.channels or 1
    ops = [pip.Op((plate, w), None, volume) for w in wells]
    policy = pip.policy_used(ops, frame.ents.tips or p.tips)
    pip.emit(world, world.labware(plate).instrument, ops, channels, policy)
    p.plate, p.wells = plate, wells
    return (
        f"take {fmt(volume, 'uL')} out of {plate} {wells[0]}..{wells[-1]} "
        f"({len(wells)} wells) to waste, "
        f"a new tip for every well ({'8 channels' if channels == 8 else '1 channel'})"
    )


def _empty(frame: Frame, p: r.Planning, plate: str, wells: list[str]) -> str:
    """'Remove all the medium': each well's whole volume, as the lab state gives it."""
    world = p.world
    ops = [pip.Op((plate, w), None, round(world.well_volume(plate, w), 4)) for w in wells]
    ops = [o for o in ops if o.volume > 0]
    if not ops:
        raise Refuse(f"{plate} {wells[0]}.. are already empty", "nothing_to_do")
    channels = frame.ents.channels or p.channels or 1
    pip.emit(world, world.labware(plate).instrument, ops, channels, "per_destination")
    p.plate, p.wells = plate, wells
    return f"take everything out of {plate} {wells[0]}..{wells[-1]} ({len(ops)} wells) to waste"


FAMILY = Family("volumes", detect, build)
