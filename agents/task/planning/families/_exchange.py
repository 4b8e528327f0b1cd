"""Liquid out to waste, then fresh liquid in: a media exchange ("replace 100 uL of the medium
with fresh"), a renewal ("replace the medium in row B with 200 uL": all of it out first) and a
wash (n times the wash liquid in, then out). What goes out leaves with its tip, so every well
emptied takes a new one.
"""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask
from agents.task.planning._quantities import fmt, number
from agents.task.planning.families import _amounts as am
from agents.task.planning.families._places import volume_wells as _wells

_FLAGS = re.IGNORECASE
_MEDIUM = re.compile(r"\b(?:media|medium|dmem|rpmi|e?mem|opti-?mem|f-?12|growth)\b", _FLAGS)


def wash(frame: Frame, p: r.Planning) -> str:
    """n times: the wash liquid into the wells (one tip), then out of each to waste."""
    world = p.world
    plate, wells = _wells(frame, p, "wash")
    try:
        liquid = r.liquid(frame.liquid, p, "wash liquid")
    except Ask as ask:
        if frame.volume is None:  # "wash P row A 3x" in a lab without a wash: both are open
            raise Ask(
                f"{ask.question.rstrip('?')}, and how many uL per well?",
                [*ask.missing, "volume"],
                ask.options,
            ) from None
        raise
    volume = r.quantity(frame.volume, frame, "How many uL of wash per well?", "volume")
    said = re.search(r"\b(\d+|two|three|four|five)\s+(?:washe?s|rinses)\b", frame.text, _FLAGS)
    times = frame.ents.times or (int(number(said.group(1))) if said else 1)  # "3 washes of"
    channels = frame.ents.channels or p.channels or 1
    lh = world.labware(plate).instrument
    for _ in range(times):
        world.room_for_each(plate, wells, volume)  # capacity before the source
        src = r.source_of(liquid, volume * len(wells), world, {(plate, w) for w in wells})
        ops = [pip.Op(src, (plate, w), volume) for w in wells]
        pip.emit(world, lh, ops, channels, pip.policy_used(ops, frame.ents.tips or p.tips))
        pip.emit(
            world,
            lh,
            [pip.Op((plate, w), None, volume) for w in wells],
            channels,
            "per_destination",
        )
    p.plate, p.wells = plate, wells
    return (
        f"wash {plate} {wells[0]}..{wells[-1]} ({len(wells)} wells) {times}x: {fmt(volume, 'uL')} "
        f"{liquid} in, then out to waste ({'8 channels' if channels == 8 else '1 channel'})"
    )


_A_WASH = re.compile(r"^(?:wash|rinse)(?:es|ed|ing)?\b", _FLAGS)
_TAKES_OUT = re.compile(r"^(?:remove|aspirate|discard|take|withdraw|pull|suck|draw)\b", _FLAGS)
_THE_WASH = re.compile(r"\b(?:wash|rinse|it|them)\b", _FLAGS)


def takes_the_wash_out(wash: Frame, frame: Frame) -> bool:
    """'wash with 500 uL HBSS, remove the 500 uL wash': the removal is the wash's own way out
    (a wash is in, then out), said as a step of its own - never a second removal."""
    volume, liquid = frame.volume, frame.liquid
    return bool(
        _A_WASH.match(wash.text)
        and _TAKES_OUT.match(frame.text)
        and not (frame.ents.wellsets or frame.ents.labware)
        and (volume is None or (wash.volume is not None and volume.value == wash.volume.value))
        and (
            _THE_WASH.search(frame.text)
            or (liquid is not None and wash.liquid is not None and liquid.name == wash.liquid.name)
        )
    )


def exchange(frame: Frame, p: r.Planning) -> str:
    """V of what the wells hold out to waste (a tip per well), then V of fresh liquid in."""
    world = p.world
    plate, wells = _wells(frame, p, "exchange the medium in")
    share = am.share(frame.text)
    held_ul = {round(world.well_volume(plate, w), 4) for w in wells}
    cut = re.search(r"\bwith\b", frame.text, _FLAGS)
    taken = [q for q in frame.ents.volumes() if cut is None or q.end <= cut.start()]
    given = [q for q in frame.ents.volumes() if cut is not None and q.start >= cut.end()]
    if given and not taken and share is None:  # "replace the medium in B1:B12 with 200 uL"
        return _renew(frame, p, plate, wells, given[0].value)
    if frame.volume is None and share is not None and len(held_ul) == 1 and min(held_ul) > 0:
        volume = round(share * min(held_ul), 4)  # "replace half of the medium": of what it holds
    else:
        volume = r.quantity(
            frame.volume, frame, "How many uL should I exchange in each well?", "volume"
        )
    r.positive_volume(volume, f"{volume:g} uL")
    channels = frame.ents.channels or p.channels or 1
    out = [pip.Op((plate, w), None, volume) for w in wells]
    src, liquid = _out_then_in(frame, p, plate, wells, out, volume, channels)
    return (
        f"exchange {fmt(volume, 'uL')} in {plate} {wells[0]}..{wells[-1]} ({len(wells)} wells): "
        f"out to waste (a new tip for every well), then {fmt(volume, 'uL')} {liquid} "
        f"({src[0]} {src[1]}) in"
    )


def _renew(frame: Frame, p: r.Planning, plate: str, wells: list[str], volume: float) -> str:
    """ "Replace the medium in row B with 200 uL fresh": all of it out, then the new volume."""
    world = p.world
    r.positive_volume(volume, f"{volume:g} uL")
    out = [pip.Op((plate, w), None, round(world.well_volume(plate, w), 4)) for w in wells]
    out = [o for o in out if o.volume > 1e-6]
    channels = frame.ents.channels or p.channels or 1
    src, liquid = _out_then_in(frame, p, plate, wells, out, volume, channels)
    return (
        f"replace what {plate} {wells[0]}..{wells[-1]} ({len(wells)} wells) hold: all of it out "
        f"to waste (a new tip for every well), then {fmt(volume, 'uL')} {liquid} "
        f"({src[0]} {src[1]}) in"
    )


def _out_then_in(
    frame: Frame,
    p: r.Planning,
    plate: str,
    wells: list[str],
    out: list[pip.Op],
    volume: float,
    channels: int,
) -> tuple[tuple[str, str], str]:
    """Emit the removals, then ``volume`` of the fresh liquid into every well."""
    world = p.world
    held = {k for w in wells for k, v in world.contents.get((plate, w), {}).items() if v > 0}
    fresh = [m for m in frame.liquids if m.name in world.liquids and m.name not in held]
    if fresh:
        liquid = r.liquid(fresh[-1], p)
    else:
        media = [n for n in world.liquids if _MEDIUM.search(n)]
        if len(media) != 1:
            raise Ask("Which fresh liquid should go in?", ["liquid"], r.liquids(world))
        liquid = media[0]
    lh = world.labware(plate).instrument
    if out:
        pip.emit(world, lh, out, channels, "per_destination")
    world.room_for_each(plate, wells, volume)  # capacity before the source
    src = r.source_of(liquid, volume * len(wells), world, {(plate, w) for w in wells})
    ops = [pip.Op(src, (plate, w), volume) for w in wells]
    policy = pip.policy_used(ops, frame.ents.tips or p.tips)
    pip.emit(world, lh, ops, channels, policy)
    p.policies_used.append(pip.POLICIES[policy])
    p.plate, p.wells = plate, wells
    return src, liquid
