"""How a serial dilution's last well ends when the request says it. A discard said right after
the series ("..., 100 uL final. Discard 100 uL from the last well", "..., discard the excess
from A6") is the series' own discard, not a second one on top of what its final volume
implies: the series leaves its last well to that clause."""

from __future__ import annotations

import re
from typing import Any

from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask
from agents.task.planning._wellsets import SelectionError
from agents.task.planning.families._dilution_words import KEEP_EXCESS

_FLAGS = re.IGNORECASE
_DISCARDS = re.compile(
    r"^(?:then\s+)?(?:discard|remove|aspirate|take\s+(?:out|off|away)|throw\s+(?:away|out)|dump)\b"
    r"|\b(?:to|into)\s+(?:the\s+)?waste\b",
    _FLAGS,
)
_LAST = re.compile(
    r"\b(?:last|final|end)\s+(?:wells?|dilutions?|points?|ones?|standards?)\b"
    r"|\b(?:the\s+)?(?:excess|extra|surplus|leftover)\b",
    _FLAGS,
)


def said_discards(composed: list[tuple[Frame, Any]]) -> list[tuple[Frame, Any]]:
    """``composed`` with each discard said right after a dilution given to it: "discard the
    excess from the last well" (no volume) is the series' own discard, folded into it; one
    with a volume ("Discard 100 uL from H12") stays a clause, and the series leaves its last
    well to it."""
    out: list[tuple[Frame, Any]] = []
    for frame, family in composed:
        prev = out[-1][0] if out and out[-1][1].name == "dilution" else None
        if prev is not None and family.name == "volumes" and _DISCARDS.search(frame.text):
            if not frame.ents.volumes() and _LAST.search(frame.text):
                prev.extra["excess_out"] = frame
                folded = prev.extra.get("folded")
                prev.extra["folded"] = [*(folded if isinstance(folded, list) else []), frame.clause]
                continue
            prev.extra["discard_after"] = frame
        out.append((frame, family))
    return out


def _names_other_wells(said: Frame, plate: str, chains: list[list[str]], view: Any) -> bool:
    """The discard names a plate other than the series' or wells that are not its last ones."""
    if any(m.name != plate for m in said.ents.labware):
        return True
    named: set[str] = set()
    for ws in said.ents.wellsets:
        try:
            named.update(ws.expand(view.rows, view.cols))
        except SelectionError:
            return True
    return bool(named) and not {c[-1] for c in chains} <= named


def last_well_out(
    frame: Frame, plate: str, chains: list[list[str]], view: Any, excess: float
) -> bool | None:
    """What the request says of the series' last wells: True, their ``excess`` goes to waste
    (the series' own discard folded into it); False, they keep it ("don't discard", or that
    same discard said after the series, which does it); None, nothing is said."""
    if KEEP_EXCESS.search(frame.text):
        return False
    folded = frame.extra.get("excess_out")
    if isinstance(folded, Frame):
        if _names_other_wells(folded, plate, chains, view):
            raise Ask(
                "Which wells' excess should go to waste: the last well of each dilution?",
                ["wells"],
                [c[-1] for c in chains],
            )
        return True
    after = frame.extra.get("discard_after")
    if not isinstance(after, Frame) or not (after.ents.wellsets or _LAST.search(after.text)):
        return None
    said = [q.value for q in after.ents.volumes()]
    if _names_other_wells(after, plate, chains, view) or len(said) != 1:
        return None
    return None if abs(said[0] - excess) > 0.01 else False  # another volume: a discard of its own
