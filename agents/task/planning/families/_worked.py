"""The wells a request has been working on: "then make every well up to 200 uL", "DMSO up to
50 uL in each" after a list of wells, one volume each, means the wells that list filled (and
the blanks it named), not the whole plate nor only the list's last well."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame

_EACH = re.compile(
    r"\b(?:each|every|all)(?:\s+(?:one|wells?|of\s+them|of\s+those|of\s+these))?\b"
    r"|\b(?:them|those|these)\s+all\b",
    re.IGNORECASE,
)


# "bring both up to 250 uL": the two wells just worked on, which two clauses may have filled
_BOTH = re.compile(r"\b(?:both|the\s+two|these\s+two|those\s+two)\b(?!\s+plates\b)", re.IGNORECASE)
_PLURAL = re.compile(r"\b(?:them|those|these|they)\b", re.IGNORECASE)


def _order(well: str) -> tuple[int, str]:
    return int(well[1:]), well[0]


def worked_wells(frame: Frame, p: r.Planning, plate: str, place: object) -> list[str] | None:
    """The wells of ``plate`` the request filled before this clause (since the heading over
    it, when there is one) and the blanks it named there, when the clause says "each" /
    "every well" and names neither the plate nor wells of its own; None otherwise."""
    wells = getattr(place, "wells", None)
    said_all = wells is not None and {x.kind for x in wells.parts} == {"all"}
    if getattr(place, "labware", None) is not None or (wells is not None and not said_all):
        return None  # "every well of std_dil", "A1-A6": the clause says where
    if (said := said_plural(frame, p, plate)) is not None:
        return said
    if not _EACH.search(frame.text):
        return None
    since = p.fill.poured_at if p.fill is not None else 0
    view = p.world.labware(plate)
    filled = [w for (lw, w), _ in p.world.poured[since:] if lw == plate]
    blanks = [w for b in p.blanks for w in b.expand(view.rows, view.cols)]
    found = list(dict.fromkeys(filled + blanks))
    if len(found) < 2:
        return None  # one well or none: nothing to widen to
    return sorted(found, key=_order)


def _both(p: r.Planning, plate: str) -> list[str] | None:
    """ "Put 40 uL in A1 and 25 uL in B1, then bring both up to 250 uL": the last two wells
    of ``plate`` filled (the last clause's two, or its one and the one before); None when the
    last clause worked on more than two wells (then "both" is not about wells)."""
    if p.plate == plate and len(p.wells) == 2:
        return list(p.wells)
    if p.plate == plate and len(p.wells) > 2:
        return None
    last = list(dict.fromkeys(w for (lw, w), _ in reversed(p.world.poured) if lw == plate))
    return sorted(last[:2], key=_order) if len(last) >= 2 else None


def said_plural(frame: Frame, p: r.Planning, plate: str) -> list[str] | None:
    """The wells "both" or "them" stand for when the last clause filled only one of them."""
    if _BOTH.search(frame.text) and (two := _both(p, plate)) is not None:
        return two
    if _PLURAL.search(frame.text):
        return plural(p, plate)
    return None


def plural(p: r.Planning, plate: str) -> list[str] | None:
    """ "Put 40 uL in A1 and 25 uL in B1, then top them up": "them" cannot be one well, so it
    is the wells of the transfers joined by "and" (None when the last clause filled several)."""
    if p.plate != plate or len(p.wells) != 1 or len(p.joined_wells) < 2:
        return None
    return sorted(p.joined_wells, key=_order)
