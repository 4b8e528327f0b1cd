"""Which of two named plates holds the samples: "the gDNA in gDNA_plt A1-C1 ... in norm_out
A1-C1" says "in" of both, and "take X A1-D1 ..., destination Y A1-D1" gives neither a role.
The samples are where the liquid is: of two plates, the one whose named wells all hold liquid
is the source and the one that holds nothing there receives."""

from __future__ import annotations

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Place

_EPS = 1e-6


def filled(place: Place, p: r.Planning) -> bool:
    """Whether every well a place names holds liquid (False when it names none)."""
    if place.labware is None or not place.wells:
        return False
    view = p.world.labware(place.labware.name)
    wells = place.wells.expand(view.rows, view.cols)
    return all(p.world.well_volume(place.labware.name, w) > _EPS for w in wells)


def empty(place: Place, p: r.Planning) -> bool:
    """Whether a place's named wells (its whole plate when none are named) hold nothing."""
    if place.labware is None:
        return False
    name = place.labware.name
    if not place.wells:
        return not any(v > _EPS for (lw, _), v in p.world.volume.items() if lw == name)
    view = p.world.labware(name)
    wells = place.wells.expand(view.rows, view.cols)
    return all(p.world.well_volume(name, w) <= _EPS for w in wells)


def swapped(src: Place, dst: Place, p: r.Planning) -> bool:
    """Whether the place read as the destination holds the samples and the one read as the
    source is empty: the roles the words gave are the wrong way round."""
    return (
        src.labware is not None
        and dst.labware is not None
        and src.labware.name != dst.labware.name
        and filled(dst, p)
        and empty(src, p)
    )
