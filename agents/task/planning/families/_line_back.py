"""The line a serial dilution runs along when it says "down the column" or "across the row"
and names no wells: the one column (or row) of the plate that the clauses before it filled
("put 180 uL buffer in B1-H1 and 200 uL dye in A1, then 10-fold down the column")."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame

_THE_LINE = re.compile(
    r"\b(?:down|across|along|through)\s+(?:the|that|this)\s+(?P<line>columns?|cols?|rows?)\b",
    re.IGNORECASE,
)


def filled_line(frame: Frame, plate: str, p: r.Planning) -> list[str] | None:
    """The wells of ``plate`` holding something, in order, when they make up the one line the
    clause refers back to; None when they do not (then the wells are asked)."""
    said = _THE_LINE.search(frame.text)
    if said is None:
        return None
    held = [w for (lw, w), v in p.world.volume.items() if lw == plate and v > 1e-6]
    down = said.group("line").lower().startswith("col")
    lines = {w[1:] for w in held} if down else {w[0] for w in held}
    if len(held) < 2 or len(lines) != 1:
        return None
    return sorted(held, key=lambda w: (w[0], int(w[1:])) if down else (int(w[1:]), w[0]))
