"""The stock a dilution takes from wells the request names ("serially dilute sample_plate A1
... down assay column 1", "the column 1 overnights across plate_b"): their labware, wells and
liquid, and which of them starts which chain."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._outcomes import Ask
from agents.task.planning._wellsets import SelectionError

_BESIDE = re.compile(r"^\s*(?:(?:in|from|of|at)\s+)?(?:the\s+)?$", re.IGNORECASE)


def held_stock(
    frame: Frame, p: r.Planning, chain_place: Place
) -> tuple[str, list[str], str] | None:
    """ "Serially dilute sample_plate A1 1:3 in water down assay_384 column 1": the wells a
    clause names as what is diluted, when they hold one liquid (its labware, wells, liquid)."""
    world = p.world
    for role, place in frame.places:
        if role not in ("head", "source") or place is chain_place:
            continue
        if place.labware is None and place.wells is not None:
            found = _unplated_stock(frame, p, place, chain_place)
            if found is not None:
                return found
        if place.labware is None or not place.labware.sure or place.wells is None:
            continue
        lw = place.labware.name
        view = world.labware(lw)
        wells = place.wells.expand(view.rows, view.cols)
        names = {n for w in wells for n, v in world.contents.get((lw, w), {}).items() if v > 0}
        if len(names) == 1 and all(world.well_volume(lw, w) > 0 for w in wells):
            return lw, wells, names.pop()
    return None


def _unplated_stock(
    frame: Frame, p: r.Planning, place: Place, chain_place: Place
) -> tuple[str, list[str], str] | None:
    """ "2-fold dilution of the column 1 overnights across plate_b": wells named without a
    plate, and the liquid named with them, which only one other labware holds in all of them."""
    if place.wells is None:
        return None
    ws, text = place.wells, frame.ents.text
    named = {  # the liquid said right beside the wells: "column 1 overnights", "sera in A1"
        m.name
        for m in frame.ents.liquids
        if _BESIDE.match(text[ws.end : m.start] if m.start >= ws.end else text[m.end : ws.start])
    }
    chain = chain_place.labware.name if chain_place.labware is not None else None
    if not named:
        return None
    found = []
    for lw in p.world.lab.labware:
        view = p.world.labware(lw)
        if lw == chain or view.kind == "tip_rack":
            continue
        try:
            wells = place.wells.expand(view.rows, view.cols)
        except SelectionError:
            continue
        held = {n for w in wells for n, v in p.world.contents.get((lw, w), {}).items() if v > 0}
        if len(held) == 1 and held <= named and all(p.world.well_volume(lw, w) > 0 for w in wells):
            found.append((lw, wells, held.pop()))
    return found[0] if len(found) == 1 else None


def stock_sources(
    held: tuple[str, list[str], str] | None, firsts: list[str], default: tuple[str, str]
) -> list[tuple[str, str]]:
    """Where each chain's stock comes from: the one well named, or one named well per chain."""
    if held is None:
        return [default] * len(firsts)
    lw, wells, _ = held
    if len(wells) == 1:
        return [(lw, wells[0])] * len(firsts)
    if len(wells) == len(firsts):
        return [(lw, w) for w in wells]
    raise Ask(
        f"{len(wells)} wells of {lw} to start {len(firsts)} dilution chains: which starts which?",
        ["wells"],
        [],
    )


def first_wells_ready(
    world: r.World, plate: str, chains: list[list[str]], stock: tuple[str, bool], needed: float
) -> bool:
    """Whether every chain's first well already holds what the chain starts with: ``needed``
    uL of the stock, or of whatever it holds when the stock was found there (made there:
    "top standard in A1: 20 uL X + 180 uL Y, then 2-fold down to H1")."""
    name, found_there = stock
    return all(
        (
            world.well_volume(plate, c[0])
            if found_there
            else world.contents.get((plate, c[0]), {}).get(name, 0)
        )
        >= needed - 1e-6
        for c in chains
    )
