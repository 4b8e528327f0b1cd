"""A ratio dilution of "each sample" into a plate named without wells: each well holding the
stock, on one plate, into the same position of a plate of the same layout."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame

_FLAGS = re.IGNORECASE


def _every_well(p: r.Planning, lw: str) -> list[str]:
    view = p.world.labware(lw)
    return [f"{chr(65 + i)}{j + 1}" for i in range(view.rows) for j in range(view.cols)]


_EACH = re.compile(r"\b(?:each|every)\s+(?:one\s+)?(?:of\s+)?(?:the\s+|my\s+|our\s+)?$", _FLAGS)


def each_held(frame: Frame, stock: str, p: r.Planning) -> tuple[str, list[str], str] | None:
    """ "1:100 of each sample into dest_plate": the stock said as each of its wells, all on one
    plate, diluted into a plate named without wells: (source plate, its wells, destination
    plate), the same positions on both; None when that is not what was said."""
    if frame.source.wells is not None or frame.dest.labware is None or frame.dest.wells:
        return None
    if not any(m.name == stock and _EACH.search(frame.text[: m.start]) for m in frame.liquids):
        return None
    held = [(lw, w) for lw, w, _ in p.world.liquids.get(stock, [])]
    plates = {lw for lw, _ in held}
    dest = frame.dest.labware.name
    if len(plates) != 1 or len(held) < 2 or dest in plates:
        return None
    (src,) = plates
    a, b = p.world.labware(src), p.world.labware(dest)
    if (a.rows, a.cols) != (b.rows, b.cols):
        return None  # another layout: which well goes where is the question
    order = [w for w in _every_well(p, src) if (src, w) in set(held)]
    return src, order, dest
