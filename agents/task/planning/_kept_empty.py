"""Wells the person says to keep empty that the plan would fill: asked, never filled.

"Add 50 uL buffer to plate_1 A1 and keep A1 empty", "column 1 but do not touch B1": the two
parts disagree about a well, and neither reading may be picked for the person (filling it
does other than asked; leaving it out may drop the point of the request). The question names
the well and both choices (``missing: wells``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agents.task.planning._outcomes import Ask

_FLAGS = re.IGNORECASE
_WELL = r"[A-Pa-p](?:[1-9]|1\d|2[0-4])(?!\d)"
_WELLS = rf"{_WELL}(?:\s*(?:,|and|&|\+|/)\s*{_WELL})*"
_EMPTY = r"(?:empty|untouched|unfilled|dry|alone|free|clear)"
_SAID = (
    # "keep A1 empty", "leave B1 and B2 untouched"
    re.compile(rf"\b(?:keep|leave)\s+(?:wells?\s+)?(?P<w>{_WELLS})\s+{_EMPTY}\b", _FLAGS),
    # "do not touch B1", "don't fill A1", "never pipette into H12"
    re.compile(
        r"\b(?:do\s+not|don'?t|never|must\s+not|should\s+not)\s+(?:touch|fill|use|pipette\s+"
        rf"into|add\s+(?:anything\s+)?(?:to|into)|dispense\s+(?:in)?to)\s+(?:wells?\s+)?"
        rf"(?P<w>{_WELLS})\b",
        _FLAGS,
    ),
    # "A1 stays empty", "B1 must remain untouched"
    re.compile(
        rf"\b(?P<w>{_WELLS})\s+(?:stays?|remains?|(?:must|should|has\s+to|will|to)\s+"
        rf"(?:stay|remain|be))\s+{_EMPTY}\b",  # never "A1 is empty": a fact about the lab
        _FLAGS,
    ),
)


def kept_empty(text: str) -> list[str]:
    """The wells ``text`` says to keep empty, in the order said."""
    found: list[str] = []
    for pattern in _SAID:
        for m in pattern.finditer(text):
            found += [w.upper() for w in re.findall(_WELL, m["w"])]
    return list(dict.fromkeys(found))


def check(text: str, steps: Sequence[Any]) -> None:
    """Ask when the plan puts liquid into a well the request says to keep empty."""
    kept = kept_empty(text)
    if not kept:
        return
    for step in steps:
        args = step.args
        if step.command == "dispense":
            plate, wells = args.get("labware"), args.get("wells") or []
        elif step.command == "transfer":
            plate, wells = args.get("destination"), args.get("destination_wells") or []
        else:
            continue
        both = [w for w in kept if w in {str(x).upper() for x in wells}]
        if both:
            w = both[0]
            raise Ask(
                f"You ask for liquid in {plate} {w} and also to keep {w} empty. Should {w} get "
                "the liquid, or stay empty (and the rest go ahead without it)?",
                ["wells"],
                [f"fill {w}", f"keep {w} empty"],
            )
