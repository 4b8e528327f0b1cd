"""The per-entity coverage check: what a clause names is used by the steps planned for it.

The clause-level check (:mod:`._coverage`) sees that every clause has steps; it cannot see
that half of a clause was left out ("shake at 500 rpm for 5 min and at 800 rpm for 1 min"
planned as one shake; "put 30 uL buffer in A1 with 10 uL dye" planned as the buffer alone).
Here every speed, duration, temperature and wavelength a clause names must be a number one of
its steps carries, and every liquid named with its own volume ("10 uL dye") must be drawn by
one of its steps (or named in what the clause was read as); else the planner asks about it.

Volumes and wells are not checked one by one: a volume is often a target the steps derive
others from (final and total volumes, ratios, passes, normalisation), and a written well is
often something said about the plate ("A12 is the blank"); checked that way, the check asked
about plans that were right (measured on the corpus).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask
from agents.task.planning._world import World
from agents.task.planning.models import PlanStep, TraceItem

_FLAGS = re.IGNORECASE
# "the wells with 100 uL cells": what a place holds, not a liquid to move.
_CONTENT = re.compile(
    r"\b(?:with|containing|holding|that\s+(?:has|have|hold|contain)s?|already|of\s+the|"
    r"(?:pre-?)?filled\s+with|(?:has|have|holds?|contains?))\s+(?:the\s+)?$",
    _FLAGS,
)
# A limit or a description, not a setting a step must carry.
_ASIDE = re.compile(
    r"\b(?:within|in\s+(?:less|under)\s+(?:than\s+)?|no\s+(?:later|longer|more)\s+than|"
    r"at\s+(?:most|least)|not\s+(?:more|longer)\s+than|max(?:imum)?|minimum|below|above|"
    r"under|over|up\s+to|(?:pre-?)?warm(?:ed)?\s+to|pre-?heated\s+to|chilled\s+to|cooled\s+to|"
    r"equilibrated\s+to|thawed\s+at|stored\s+at|kept\s+at|(?:ice[\s-])?cold|usually|"
    r"normally|typically|about|approx(?:imately|\.)?|~|e\.g\.?|like|say)\s*(?:the\s+|a\s+)?$",
    _FLAGS,
)
# "..., and (some) dye to A2": a second liquid with a place of its own, in the same breath.
_AND_ALSO = re.compile(
    r"(?:\band|\bplus|,)\s+(?:(?:some|a\s+little|a\s+bit\s+of|more|the|also)\s+)*$", _FLAGS
)
_GOES = re.compile(
    r"^\s+(?:to|into|in|onto)\s+(?:the\s+)?(?:[\w-]+\s+)?(?:wells?\s+)?[A-Pa-p]\d", _FLAGS
)
_KINDS = ("speed", "duration", "temperature", "wavelength")  # volumes: see the module doc
# "Add 20 uL to plate_1: dye A1-A3, buffer B1-B3", "A1-A3 stock, B1-B3 water": a liquid with
# wells of its own, next to it (never "to the cells in A1", where the liquid is the place)
_WELLS_NEXT = re.compile(r"^\s*(?:(?:to|into|in|->|→|=|:)\s*)?[A-Pa-p]\d{1,2}\b")
_WELLS_BEFORE = re.compile(r"\b[A-Pa-p]\d{1,2}\s*(?:(?:gets?|receives?|->|→|=|:)\s*)?$", _FLAGS)
_ONTO = re.compile(r"\b(?:to|onto|into|in|on|over)\s+(?:the\s+)?$", _FLAGS)


def _numbers(value: Any) -> Iterator[float]:
    """Every number in a step's arguments, however deep."""
    if isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _numbers(v)


def _used(value: float, numbers: list[float], kind: str) -> bool:
    if any(abs(value - n) < 1e-6 * max(1.0, abs(value)) for n in numbers):
        return True
    # a time said in minutes or hours may be held in those units
    return kind == "duration" and any(
        abs(value / 60 - n) < 1e-6 or abs(value / 3600 - n) < 1e-6 for n in numbers
    )


def _source_liquids(steps: list[PlanStep], world: World) -> set[str]:
    """The liquids the lab held, before the plan, in the wells these steps draw from."""
    found: set[str] = set()
    for step in steps:
        source = step.args.get("source") or (
            step.args.get("labware") if step.command == "aspirate" else None
        )
        wells = step.args.get("source_well") or step.args.get("wells") or []
        wells = [wells] if isinstance(wells, str) else wells
        labware = world.lab.labware.get(str(source)) if source else None
        for well in wells if labware else []:
            view = labware.wells.get(well) if labware else None
            found.update(k.lower() for k in (view.contents if view else {}))
            found.update(k.lower() for k in world.contents.get((str(source), well), {}))
    return found


_ROLE_WORD = re.compile(r"(?:the\s+)?(?:diluents?|buffers?)", re.IGNORECASE)
_PER_CYCLE = re.compile(r"\s*(?:/|per|each|every|a)\s*cycle\b", re.IGNORECASE)


def check(frame: Frame, item: TraceItem, steps: list[PlanStep], world: World) -> None:
    """Ask about whatever ``frame`` names that the steps planned for it do not use."""
    if item.kind != "action" or not steps:
        return
    numbers: list[float] | None = None  # gathered when a quantity needs them
    for q in frame.ents.quantities:
        if _ASIDE.search(frame.text[: q.start]) or _PER_CYCLE.match(frame.text[q.end :]):
            continue  # "read within 30 min", "pre-warmed to 37 C", "0.5 C per cycle" (a step's)
        if q.kind in _KINDS and numbers is None:
            numbers = [n for s in steps for n in _numbers(s.args)]
        if q.kind in _KINDS and not _used(q.value, numbers or [], q.kind):
            raise Ask(
                f"I read it as '{item.understood}', which does not use the {q.text} you "
                f"named. Could you say what the {q.text} is for, as its own step?",
                [q.kind],
                [item.understood],
            )
    if not any(st.command == "transfer" for st in steps):
        return  # liquid only taken out to waste: what the wells hold may have another name
    liquids = _source_liquids(steps, world)
    understood = item.understood.lower()
    for m in frame.ents.liquids:
        if _ROLE_WORD.fullmatch(m.written) and "dilution" in understood:
            continue  # "150 uL diluent per well" of a curve made up in another liquid: its role
        own_volume = any(
            q.kind == "volume"
            and 0 <= m.start - q.end <= 4
            and not _CONTENT.search(frame.text[: q.start])
            for q in frame.ents.quantities
        )
        name = m.name.lower()
        if own_volume and name not in liquids and name not in understood:
            raise Ask(
                f"I read it as '{item.understood}', which uses no {m.name}. Where should the "
                f"{m.name} go? Say it as its own step.",
                ["liquid"],
                [item.understood],
            )
        if (
            name not in liquids
            and name not in understood
            and _AND_ALSO.search(frame.text[: m.start])
            and _GOES.match(frame.text[m.end :])
        ):  # "add 50 uL buffer to A1 and dye to A2": how much dye was never said
            raise Ask(
                f"I read it as '{item.understood}', which uses no {m.name}. How much {m.name} "
                "should go in? Say it as its own step.",
                ["volume"],
                [item.understood],
            )
    _own_wells(frame, item, liquids)


def _own_wells(frame: Frame, item: TraceItem, drawn: set[str]) -> None:
    """Of two liquids or more, one said with wells of its own that no step draws is asked
    about (never planned as the other liquid in its wells too)."""
    if len({m.name.lower() for m in frame.ents.liquids}) < 2:
        return
    understood = item.understood.lower()
    for m in frame.ents.liquids:
        before, name = frame.text[: m.start], m.name.lower()
        if name in drawn or name in understood or _CONTENT.search(before) or _ONTO.search(before):
            continue
        if _WELLS_NEXT.match(frame.text[m.end :]) or _WELLS_BEFORE.search(before):
            raise Ask(
                f"I read it as '{item.understood}', which uses no {m.name}. Where should the "
                f"{m.name} go? Say it as its own step.",
                ["liquid"],
                [item.understood],
            )
