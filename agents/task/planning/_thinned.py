"""'Every other well' said but thinned nowhere: asked, never planned on every well.

"Odd wells: 75 uL buffer into row B of plate_2" or a heading "plate_2, odd wells only:" puts
the qualifier where no well set reads it; planned as read, every well of row B would be
filled, more than asked. When the request says "every other / alternate / odd / even wells"
and none of the well sets the plan was read from is thinned, the planner asks which wells
(``missing: wells``) instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents.task.planning._outcomes import Ask
from agents.task.planning._wellpatterns import Part
from agents.task.planning._wellsets import WellSet

_FLAGS = re.IGNORECASE
_THIN = re.compile(
    r"\b(?:every\s+(?:other|second|2nd|third|3rd|fourth|4th)|alternat(?:e|ing)|odd|even)(?:[-\s]?numbered)?\s+wells?\b",
    _FLAGS,
)
# a tip cadence ("new tip every other well") is the tip policy's, not a well set
_TIP_BEFORE = re.compile(r"\btips?\b[^,.;:]{0,25}$", _FLAGS)


def _thins(part: object) -> bool:
    if not isinstance(part, Part):
        return isinstance(part, tuple) and any(_thins(p) for p in part)
    return part.kind == "alternate" or any(_thins(a) for a in part.args)


def check(text: str, sets: Iterable[WellSet]) -> None:
    """Ask when ``text`` says to thin wells and no set in ``sets`` is thinned."""
    said = [m for m in _THIN.finditer(text) if not _TIP_BEFORE.search(text[: m.start()])]
    if not said or any(_thins(s.parts) for s in sets):
        return
    raise Ask(
        f"You said '{said[0].group(0)}': which wells exactly should receive it?",
        ["wells"],
    )
