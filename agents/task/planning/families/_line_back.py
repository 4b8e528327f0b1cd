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


_TO_END = re.compile(r"\b(?:to|through|until)\s+([A-Pa-p]\d{1,2})\b", re.IGNORECASE)


def filled_start(frame: Frame, plate: str, p: r.Planning, singles: list[str]) -> list[str] | None:
    """ "top standard in A1: 20 uL stock + 180 uL diluent, then 2-fold down to H1": the one
    well of ``plate`` the clauses before filled, on to the one well the dilution ends at."""
    end = _TO_END.search(frame.text)
    if end is None or singles != [end.group(1).upper()]:
        return None
    held = [w for (lw, w), v in p.world.volume.items() if lw == plate and v > 1e-6]
    if len(held) != 1 or held[0] == singles[0]:
        return None
    (r0, c0), (r1, c1) = (held[0][0], int(held[0][1:])), (singles[0][0], int(singles[0][1:]))
    if r0 == r1 and c0 < c1:
        return [f"{r0}{c}" for c in range(c0, c1 + 1)]
    if c0 == c1 and r0 < r1:
        return [f"{chr(o)}{c0}" for o in range(ord(r0), ord(r1) + 1)]
    return None
