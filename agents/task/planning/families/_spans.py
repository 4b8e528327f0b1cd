"""A dilution's line written as its two ends: "in column 1 of plate_2, 3-fold across to
column 8" runs through columns 1 to 8, never from column 1 straight into column 8."""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._frames import Frame
from agents.task.planning._wellsets import WellSet

# "in column 1 of plate_2, 3-fold across to column 8": the line runs from one to the other
_ON_TO = re.compile(r"^[^;]*\b(?:to|through|thru|till|until)\s+(?:the\s+)?$", re.IGNORECASE)


def spans(areas: list[WellSet], frame: Frame) -> list[WellSet]:
    """Two single columns (or rows) with "... to" between them: the span from one to the
    other, never a chain of two wells from the first straight into the last."""
    if len(areas) != 2 or any(len(a.parts) != 1 for a in areas):
        return areas
    (a, b), kinds = areas, {a.parts[0].kind for a in areas}
    if len(kinds) != 1 or kinds - {"cols", "rows"} or len(a.parts[0].args) != 1:
        return areas
    if len(b.parts[0].args) != 1 or not _ON_TO.match(frame.ents.marked[a.end : b.start]):
        return areas
    first, last = a.parts[0].args[0], b.parts[0].args[0]
    if kinds == {"cols"}:
        said: tuple[object, ...] = tuple(range(int(str(first)), int(str(last)) + 1))
    else:
        said = tuple(chr(c) for c in range(ord(str(first)), ord(str(last)) + 1))
    if len(said) < 2:
        return areas
    part = replace(a.parts[0], args=said)
    return [WellSet((part,), a.start, b.end, frame.ents.marked[a.start : b.end], axis=a.axis)]
