"""Mix wells by pipetting up and down: the wells named (or those of the clause before),
n cycles, at a stated volume or most of what the well holds; one channel or eight."""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning.families import Family
from agents.task.planning.families._worked import said_plural

_FLAGS = re.IGNORECASE
_VERB = re.compile(  # "mx" in notebook shorthand; "pipete-mix", "pipet mix" however spelt
    r"^(?:mix|mx|pip+e?t+e?[\s-]*mix|pip+e?t+e?\s+up\s+and\s+down|triturate|resuspend"
    r"|homogeni[sz]e)\b",
    _FLAGS,
)
MIX_FRACTION = 0.8  # of what the well holds, when the request gives no mixing volume


def detect(clause: Clause, ents: Entities) -> int | None:
    return 55 if _VERB.match(ents.text) else None


def build(frame: Frame, p: r.Planning) -> str:
    world = p.world
    place = frame.head if not frame.head.empty else frame.dest
    plate = r.labware(place, p, "mix")
    if place.wells is None and p.plate == plate and p.wells:
        wells = list(p.wells)  # "then mix 4x": the wells just filled
        wells = said_plural(frame, p, plate) or wells  # "..., then mix them": A1 and B1
    else:
        wells = r.wells(place, plate, p, "should I mix", frame)
    for well in wells:  # an empty well cannot be mixed however often: refused before asking
        if world.well_volume(plate, well) <= 0:
            raise Refuse(
                f"{plate} {well} is empty at that point of the plan: there is nothing to mix",
                "nothing_to_do",
            )
    cycles = frame.ents.mix_times or frame.ents.times
    if cycles is None:
        raise Ask(
            "How many times should each well be mixed?",
            ["count"],
            ["3 times", "5 times", "10 times"],
        )
    r.within(cycles, "mix_repetitions", None, world, "mixing", "times")
    channels = frame.ents.channels or p.channels or 1
    ops = []
    for well in wells:
        have = world.well_volume(plate, well)
        stated = frame.mix_volume or frame.volume
        volume = (
            stated.value if stated else round(min(have * MIX_FRACTION, world.tip_capacity()), 3)
        )
        if volume > world.tip_capacity() + 1e-6:  # a stroke is one aspiration: no passes
            raise Refuse(
                f"mixing with {volume:g} uL needs a tip that holds it: the largest tips here "
                f"hold {world.tip_capacity():g} uL",
                "capacity",
            )
        if volume > have + 1e-6:
            raise Refuse(
                f"mixing {volume:g} uL needs more than {plate} {well} holds ({have:g} uL)",
                "capacity",
            )
        ops.append((well, volume))
    policy = pip.policy_used([], frame.ents.tips or p.tips)
    lh = world.labware(plate).instrument
    p.policies_used.append(pip.POLICIES[policy])
    world.at_home(plate)
    _emit(world, lh, plate, ops, cycles, channels, policy)
    p.plate, p.wells = plate, wells
    span = wells[0] + (f"..{wells[-1]} ({len(wells)} wells)" if len(wells) > 1 else "")
    head = "8 channels" if channels == 8 else "1 channel"
    return f"mix {plate} {span} {cycles}x ({head}; tips: {pip.POLICIES[policy]})"


def _emit(
    world: r.World,
    lh: str,
    plate: str,
    ops: list[tuple[str, float]],
    cycles: int,
    channels: int,
    policy: str,
) -> None:
    """Each well its own tip (per source) unless one tip was asked; 8 channels by column."""
    if channels == 1:
        holding = False
        for i, (well, volume) in enumerate(ops):
            if not holding:
                rack, spots = world.take_tips(volume)
                world.emit(lh, "pick_up_tips", {"rack": rack, "spots": spots, "channels": [0]}, {})
                holding = True
            world.emit(
                lh,
                "mix",
                {
                    "labware": plate,
                    "well": well,
                    "volume_ul": volume,
                    "repetitions": cycles,
                    "channel": 0,
                },
                {},
            )
            if policy != "once" or i == len(ops) - 1:
                world.emit(lh, "drop_tips", {"channels": [0]}, {})
                holding = False
        return
    columns: dict[str, list[tuple[str, float]]] = {}
    for well, volume in ops:
        columns.setdefault(well[1:], []).append((well, volume))
    cols = list(columns.values())
    held: list[int] = []
    for i, col in enumerate(cols):
        chans = [ord(w[0]) - 65 for w, _ in col]
        volume = min(v for _, v in col)
        if not held:
            need = sorted(
                {ord(w[0]) - 65 for c in (cols if policy == "once" else [col]) for w, _ in c}
            )
            rack, spots = world.take_tips(volume, rows=need)
            world.emit(lh, "pick_up_tips", {"rack": rack, "spots": spots, "channels": need}, {})
            held = need
        for _ in range(cycles):
            for command in ("aspirate", "dispense"):
                world.emit(
                    lh,
                    command,
                    {
                        "labware": plate,
                        "wells": [w for w, _ in col],
                        "volume_ul": volume,
                        "channels": chans,
                    },
                    {},
                )
        if policy != "once" or i == len(cols) - 1:
            world.emit(lh, "drop_tips", {"channels": held}, {})
            held = []


FAMILY = Family("mix", detect, build)
