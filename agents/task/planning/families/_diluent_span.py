"""Where a serial dilution's diluent is, said inside the series' own sentence ("across row A,
diluent (RPMI) already in A2-A12", "..., buffer in A2-A12", "with medium pre-filled in
columns 2-12"): those wells are the chain after its first well, never the chain itself.

With the line named as well ("row A"), the diluent's wells only say where the diluent is; said
alone, the chain is the well before them followed by them (A1, then A2..A12).
"""

from __future__ import annotations

import re

from agents.task.planning._wellpatterns import Part
from agents.task.planning._wellsets import WellSet

_FLAGS = re.IGNORECASE
# the piece before the wells: "diluent ... in", "RPMI already in", "buffer in", "pre-filled in"
_DILUENT_IN = re.compile(
    r"(?:\b(?:diluent|already|pre-?(?:filled|dispensed|loaded|plated))\b"
    r"|\b(?:buffer|medium|media|broth)\s+(?:is\s+|are\s+|sits\s+)?)"
    r"[^,;:.]*?\b(?:in|into|across|over)\s+(?:wells?\s+)?(?:the\s+)?$"
    r"|\b(?:diluent|already|pre-?(?:filled|dispensed|loaded|plated))\b[^,;:.()]*\(\s*$",
    _FLAGS,
)
_PIECE = re.compile(r"[,;:.]|\band\b|\bwith\b(?=\s+(?:the\s+)?\w+\s+(?:already|pre))", _FLAGS)


def diluent_sets(sets: list[WellSet], marked: str) -> list[WellSet]:
    """The well sets the sentence names as the diluent's place."""
    out = []
    for ws in sets:
        before = marked[: ws.start]
        cut = max((m.end() for m in _PIECE.finditer(before)), default=0)
        if _DILUENT_IN.search(before[cut:] if cut < len(before) else "") or _DILUENT_IN.search(
            before[max(0, cut - 1) :]
        ):
            out.append(ws)
    return out


def without_diluent(sets: list[WellSet], marked: str, rows: int, cols: int) -> list[WellSet]:
    """The well sets that say where the chain runs: those of the diluent only when nothing else
    does, each then led by the well before it on its line."""
    held = diluent_sets(sets, marked)
    if not held:
        return sets
    rest = [ws for ws in sets if ws not in held]
    lines = [ws for ws in rest if any(pt.kind != "well" for pt in ws.parts)]
    if lines:
        return rest
    return rest + [_led(ws, rows, cols) for ws in held]


def _led(ws: WellSet, rows: int, cols: int) -> WellSet:
    """The set with the well before it on its row (or column) in front (A2-A12 -> A1-A12)."""
    wells = ws.expand(rows, cols)
    if len(wells) < 2:
        return ws
    first, last = wells[0], wells[-1]
    if len({w[0] for w in wells}) == 1 and int(first[1:]) > 1:
        lead = f"{first[0]}{int(first[1:]) - 1}"
    elif len({w[1:] for w in wells}) == 1 and first[0] > "A":
        lead = f"{chr(ord(first[0]) - 1)}{first[1:]}"
    else:
        return ws
    return WellSet((Part("rect", (lead, last)),), ws.start, ws.end, ws.text)
