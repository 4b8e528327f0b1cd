"""Where a liquid is drawn from: the wells that hold it pure, and the one place to take it.

A liquid kept in a trough and also already laid out in a plate's wells is drawn from the
trough; several troughs (or a liquid only in a plate's wells) are asked about.
"""

from __future__ import annotations

from agents.task.planning._labware_names import reservoir_like
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt
from agents.task.planning._world import World


def sources(
    liquid_name: str,
    world: World,
    exclude: set[tuple[str, str]],
    reserved: dict[tuple[str, str], float] | None = None,
) -> list[tuple[str, str, float]]:
    """Wells holding ``liquid_name`` pure: (labware, well, uL left after ``reserved``),
    fullest first."""
    found = []
    for lw, well, _ in world.liquids.get(liquid_name, []):
        mix = world.contents.get((lw, well), {})
        have = world.well_volume(lw, well) - (reserved or {}).get((lw, well), 0.0)
        if (
            (lw, well) in exclude
            or have <= 0
            or mix.get(liquid_name, 0) < 0.999 * sum(mix.values())
        ):
            continue
        found.append((lw, well, have))
    return sorted(found, key=lambda f: -f[2])


def source_of(
    liquid_name: str,
    needed: float,
    world: World,
    exclude: set[tuple[str, str]],
    reserved: dict[tuple[str, str], float] | None = None,
) -> tuple[str, str]:
    """The one place ``liquid_name`` is kept; ask when it is in several troughs, refuse when
    no well holds ``needed`` uL (beyond what earlier clauses still to be emitted take)."""
    found = sources(liquid_name, world, exclude, reserved)
    away = [f for f in found if f[0] not in {lw for lw, _ in exclude}]
    found = away or found  # buffer already dispensed into the plate being filled is no source
    # DMSO in a trough and pre-dispensed into a plate's wells: the trough is the bulk source,
    # the plate's wells are work already laid out (never drawn on for a reagent)
    found = [f for f in found if reservoir_like(world.labware(f[0]))] or found
    troughs = {lw for lw, _, _ in found}
    view = world.labware(found[0][0]) if found else None
    if len(found) > 1 and (len(troughs) > 1 or (view and min(view.rows, view.cols) > 1)):
        # (lanes of one trough plate hold one stock; the wells of a plate hold samples)
        raise Ask(
            f"{liquid_name} is in {len(found)} places: which one should I take it from?",
            ["source"],
            [f"{lw} {w} ({fmt(round(v, 3), 'uL')})" for lw, w, v in found],
        )
    for lw, well, have in found:
        if have + 1e-6 >= needed:
            return lw, well
    if not found:
        raise Ask(
            f"There is no {liquid_name} left to take: which source?",
            ["source"],
            sorted(world.liquids),
        )
    lw, well, have = found[0]
    raise Refuse(
        f"{lw} {well} has {fmt(round(have, 3), 'uL')} of {liquid_name} left for this, less "
        f"than the {fmt(round(needed, 3), 'uL')} the request needs",
        "insufficient_liquid",
    )
