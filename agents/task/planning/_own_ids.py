"""The lab's own ids written as the lab spells them, however the request spaces them.

People write ``plate_1`` as "plate 1", "plate-1" or "plate1", ``assay_384`` as "assay 384",
``odtc_1`` as "ODTC 1". Left spaced, the number in such an id reads as a quantity or a well
("Read: plate 1, 600 nm" is not a wavelength of 1 nm; "assay 384, 2 uL" is no 384 uL). So each
clause, as soon as it is split off, reads every labware and instrument id of the lab written
with other separators as the id itself. An id written exactly is not touched.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from agents.task.planning._clauses import Clause
from agents.task.planning.models import LabView


@lru_cache(maxsize=64)
def _spaced_ids(ids: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for the ids of several parts written with a space, a hyphen, an underscore
    or nothing between the parts (longest first, so plate_10 is never read as plate_1)."""
    forms = []
    for i, iid in enumerate(sorted(ids, key=len, reverse=True)):
        parts = [re.escape(p) for p in re.split(r"[_\-]+", iid) if p]
        if len(parts) >= 2:
            forms.append(f"(?P<i{i}>{'[ _-]?'.join(parts)})")
    if not forms:
        return None
    return re.compile(rf"(?<![\w«:-])(?:{'|'.join(forms)})(?![\w»]|[-.]\w)", re.IGNORECASE)


def own_ids(text: str, lab: LabView) -> str:
    """``text`` with the lab's labware and instrument ids written as the lab writes them."""
    ids = tuple(sorted({*lab.labware, *lab.instruments}))
    rx = _spaced_ids(ids)
    if rx is None:
        return text
    ordered = sorted(ids, key=len, reverse=True)

    def one(m: re.Match[str]) -> str:
        return ordered[int(next(k for k, v in m.groupdict().items() if v is not None)[1:])]

    return rx.sub(one, text)


def in_clauses(clauses: list[Clause], lab: LabView) -> list[Clause]:
    """Each clause read with the lab's ids as the lab writes them; what the person said (the
    trace's words, which the coverage check matches) stays as written."""
    return [
        replace(c, text=own_ids(c.text, lab), label=c.label and own_ids(c.label, lab))
        for c in clauses
    ]
