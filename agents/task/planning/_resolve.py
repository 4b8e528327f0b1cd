"""Turning what a clause names into things of this lab — or asking, or refusing.

Every lookup that can fail says what is missing and offers the lab's real choices: the plates,
the liquids, the instruments, the wells of a plate. Limits come from the instrument's
``limits`` when the lab view gives them, else from the instrument kind's physical defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.task.planning import _wells
from agents.task.planning._grammar import Clause, Lexicon, Target
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._units import Quantity, fmt
from agents.task.planning._world import World

# The contract's defaults for instruments whose lab view carries no limits.
DEFAULT_LIMITS: dict[str, tuple[float, float]] = {
    "temperature_range_c": (4.0, 100.0),
    "rpm_range": (200, 3000),
    "wavelength_range_nm": (230, 1000),
    "duration_range_s": (1, 86_400),
    "mix_repetitions": (1, 50),
    "block_range_c": (0.0, 100.0),
    "lid_range_c": (20.0, 115.0),
}
_KIND_LABEL = {
    "plate_reader": "plate reader",
    "heater_shaker": "heater-shaker",
    "plate_mover": "plate mover",
    "liquid_handler": "liquid handler",
    "thermocycler": "thermocycler",
}


@dataclass
class Context:
    """What earlier clauses of a chained request were about ('then read it')."""

    plate: str | None = None
    wells: list[str] = field(default_factory=list)
    thermocycler: str | None = None  # the one a profile ran on ('then hold at 4 C')


def plates(world: World) -> list[str]:
    return [lw.id for lw in world.lab.labware.values() if lw.kind == "plate"]


def liquids(world: World) -> list[str]:
    return sorted(world.lab.liquids())


def plate(target: Target, world: World, ctx: Context, doing: str) -> str:
    """The one plate a phrase names, or the plate of the clause before; else ask."""
    return plate_list(target, world, ctx, doing, single=True)[0]


def plate_list(
    target: Target, world: World, ctx: Context, doing: str, *, single: bool = False
) -> list[str]:
    if target.unknown:
        raise Ask(
            f"There is no {target.unknown[0]} in the lab: which plate should I {doing}?",
            ["plate"],
            plates(world),
        )
    if single and len(target.plates) > 1:
        raise Ask(f"Which one plate should I {doing}?", ["plate"], target.plates)
    if target.plates:
        return target.plates
    if ctx.plate is not None:
        return [ctx.plate]
    raise Ask(f"Which plate should I {doing}?", ["plate"], plates(world))


def wells(target: Target, plate_id: str, world: World, ctx: Context, what: str) -> list[str]:
    """The wells a phrase selects on a plate ('them' = the wells of the clause before)."""
    lw = world.labware(plate_id)
    options = _wells.examples(lw.rows, lw.cols)
    if target.selection is None:
        if target.refers_back and ctx.plate == plate_id and ctx.wells:
            return ctx.wells
        raise Ask(f"Which wells of {plate_id} {what}?", ["wells"], options)
    try:
        return _wells.expand(target.selection, lw.rows, lw.cols)
    except _wells.SelectionError as exc:
        raise Ask(f"{exc} ({plate_id}): which wells {what}?", ["wells"], options) from exc


def liquid(name: str, world: World, lex: Lexicon) -> str:
    """The lab's name of a liquid; ask when the lab has none of it."""
    found = lex.liquids.get(name.lower())
    if found is None:
        raise Ask(f"There is no {name} in the lab: which liquid?", ["liquid"], liquids(world))
    return found


def source_of(
    liquid_name: str, needed: float, world: World, exclude: set[tuple[str, str]]
) -> tuple[str, str]:
    """The fullest well of pure ``liquid_name`` holding ``needed`` uL; else ask."""
    found = []
    for lw, well, _ in world.lab.liquids().get(liquid_name, []):
        mix = world.contents.get((lw, well), {})
        have = world.well_volume(lw, well)
        if (
            (lw, well) in exclude
            or have <= 0
            or mix.get(liquid_name, 0) < 0.999 * sum(mix.values())
        ):
            continue
        found.append((have, lw, well))
    found.sort(key=lambda f: -f[0])
    for have, lw, well in found:
        if have + 1e-6 >= needed:
            return lw, well
    raise Ask(
        f"No single well holds the {fmt(round(needed, 3), 'uL')} of {liquid_name} needed: "
        "which source should I use, or how much less?",
        ["source"],
        [f"{lw} {well} ({fmt(round(have, 3), 'uL')})" for have, lw, well in found]
        or liquids(world),
    )


def instrument(kind: str, target: Target, world: World) -> str:
    """The instrument of a kind the clause names, or the lab's only one; else ask."""
    named = [i for i in target.instruments if world.lab.instruments[i].kind == kind]
    if named:
        return named[0]
    label, found = _KIND_LABEL.get(kind, kind), world.lab.of_kind(kind)
    if not found:
        raise Refuse(f"the lab has no {label}")
    if len(found) > 1:
        raise Ask(f"Which {label}?", [label], [i.id for i in found])
    return found[0].id


def place_of(instrument_id: str, world: World) -> str:
    """Where a plate goes to be used by an instrument: its drawer or holder."""
    inst = world.lab.instruments[instrument_id]
    suffix = "drawer" if inst.kind == "plate_reader" else "holder"
    return inst.location or f"{instrument_id}:{suffix}"


def within(
    value: float, key: str, instrument_id: str | None, world: World, what: str, unit: str
) -> None:
    """Refuse a value outside the instrument's limits (or the physical defaults)."""
    limits = world.lab.instruments[instrument_id].limits if instrument_id else {}
    lo, hi = limits.get(key, DEFAULT_LIMITS[key])
    if not lo <= value <= hi:
        owner = f"{instrument_id}'s" if instrument_id else "the"
        raise Refuse(
            f"{what} {fmt(round(value, 3), unit)} is outside {owner} range "
            f"{fmt(lo, unit)} to {fmt(hi, unit)}"
        )


def quantity(
    q: Quantity | None,
    clause: Clause,
    question: str,
    missing: str,
    options: list[str] | None = None,
) -> float:
    """A stated quantity's value, or a question that says why it cannot be used."""
    if q is not None:
        return q.value
    if clause.vague:
        raise Ask(
            f"'{clause.vague}' is not a number I can use. {question}", [missing], options or []
        )
    if clause.bare:
        raise Ask(f"'{clause.bare[0]}' has no unit. {question}", [missing], options or [])
    raise Ask(question, [missing], options or [])


def positive_volume(value: float, text: str) -> float:
    if value <= 0:
        raise Refuse(f"{text} is not a volume that can be pipetted: it must be more than 0 uL")
    return value
