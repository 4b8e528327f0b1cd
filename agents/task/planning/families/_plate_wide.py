"""A plate named with no wells that still means every well of it.

"Fill plate_2 with 200 uL" fills the plate. So does a volume said per well of one liquid
poured onto a named plate: "50 uL/well stop solution to elisa_plate", "prime lp384_b with
20 uL DPBS per well" (a kit insert's voice). Never when the plate holds liquid in only some of
its wells (which of them is asked), when a count or a part is said, or when the liquid comes
from a plate of many wells (a copy, not a distribution).
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._outcomes import Ask, Refuse

_FLAGS = re.IGNORECASE
_FILL = re.compile(r"^fill\b", _FLAGS)
# "50 uL/well", "100 uL a well" right after the volume; "20 uL DPBS per well", "200 uL into
# each well" anywhere (never "a well" away from its volume: "into a well of X" is one well)
_A_WELL = re.compile(r"^\s*(?:/\s*well|a\s+well)\b", _FLAGS)
_PER_WELL = re.compile(
    r"\bper\s+well\b|/\s*well\b|\b(?:each|every)\s+well\b(?:(?!\s+of\b)|(?=\s+of\s+(?:the|an?)\s+"
    r"(?:other|empty|fresh|new|second)\s+plate\b))",
    _FLAGS,
)


def _one_source(frame: Frame, p: r.Planning, src_sets: list[tuple[str, list[str] | None]]) -> bool:
    """The liquid comes from one well, or from a reservoir rather than a plate of wells."""
    plates = set(r.work_plates(p.world))
    if src_sets:
        return all(
            (wells is not None and len(wells) == 1) or (wells is None and lw not in plates)
            for lw, wells in src_sets
        )
    if frame.liquid is None:
        return False
    try:
        name = r.liquid(frame.liquid, p)
    except (Ask, Refuse):
        return False  # unknown or unsure: the usual path asks about it
    at = p.world.liquids.get(name, [])
    return len(at) == 1 or (bool(at) and all(lw not in plates for lw, _, _ in at))


def _uniform(p: r.Planning, lw: str, wells: list[str]) -> bool:
    """Every well of the plate holds something, or none does."""
    held = {w for w in wells if p.world.well_volume(lw, w) > 0}
    return not held or len(held) == len(wells)


def every_well(
    frame: Frame,
    place: Place,
    lw: str,
    p: r.Planning,
    src_sets: list[tuple[str, list[str] | None]],
    wells: list[str],
) -> bool:
    """Whether a destination named without wells is every well of plate ``lw`` (``wells``)."""
    if place.wells is not None or place.labware is None:
        return False
    if _FILL.match(frame.text):
        return True  # "fill plate_2 with 200 uL": every well
    text = frame.text
    per_well = bool(_PER_WELL.search(text)) or any(
        _A_WELL.match(text[q.end :]) for q in frame.volumes
    )
    return (
        per_well
        and frame.total is None
        and frame.ents.well_count is None
        and frame.ents.replicates is None
        and _one_source(frame, p, src_sets)
        and _uniform(p, lw, wells)
    )
