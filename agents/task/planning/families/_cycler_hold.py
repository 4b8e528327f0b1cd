"""A plate held at a temperature only the thermocycler reaches ("incubate rxn_plate at 95 C for
10 min" where the heater-shaker stops at 80 C): the cycler's block holds it, never a refusal
for the heater-shaker's limit while an instrument of the lab can do it."""

from __future__ import annotations

from agents.task.planning import _resolve as r
from agents.task.planning._outcomes import Refuse


def _allowed(celsius: float, key: str, inst: str, world: r.World, what: str) -> bool:
    try:
        r.within(celsius, key, inst, world, what, "C")
    except Refuse:
        return False
    return True


def fits_block(plate: str, world: r.World) -> bool:
    """A 96-well PCR plate (about 200 uL a well): what a 96-well thermocycler block takes."""
    view = world.labware(plate)
    return view.rows * view.cols == 96 and view.well_max_volume_ul <= 250


def cycler_only(celsius: float, hs: str | None, world: r.World) -> str | None:
    """The thermocycler that may hold ``celsius`` when the heater-shaker ``hs`` may not."""
    if hs is not None and _allowed(celsius, "temperature_range_c", hs, world, "temperature"):
        return None
    for tc in world.lab.of_kind("thermocycler"):
        if _allowed(celsius, "block_range_c", tc.id, world, "block temperature"):
            return tc.id
    return None
