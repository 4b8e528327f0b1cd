"""Wells topped up: to a final volume (the difference from what each well holds, read from the
lab state or the plan so far), or by the same volume on top of what each holds."""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt
from agents.task.planning.families import _amounts as am
from agents.task.planning.families._held import wells_named_by
from agents.task.planning.families._places import volume_wells as _wells

_FLAGS = re.IGNORECASE
# "... to 50 uL with water", "using 20 uL of PBS", "(use MH broth)": the liquid that goes in
_ADDED_WITH = re.compile(
    r"\b(?:with|using|use)\s+(?:the\s+|some\s+|\d+(?:\.\d+)?\s*\w+\s+(?:of\s+)?)?$", _FLAGS
)


def top_up(frame: Frame, p: r.Planning) -> str:
    """Each well brought to the target volume: the difference from what it holds, one source."""
    world = p.world
    if (added := am.amount_added(frame)) is not None:
        return _add_each(frame, p, added)
    target = frame.final or frame.total or frame.volume
    value = r.quantity(
        target, frame, "To what final volume (uL) should each well be topped up?", "volume"
    )
    plate, wells = _wells(frame, p, "top up")
    room = world.labware(plate).well_max_volume_ul
    if room and value > room + 1e-6:
        raise Refuse(
            f"{fmt(value, 'uL')} is more than a {plate} well holds ({fmt(room, 'uL')})", "capacity"
        )
    adds = []
    for w in wells:
        have = world.well_volume(plate, w)
        if have > value + 1e-6:
            raise Ask(
                f"{plate} {w} already holds {fmt(round(have, 3), 'uL')}, more than the "
                f"{fmt(value, 'uL')} to top it up to. Which is right: the lab state or the "
                "request?",
                ["lab_state"],
                [f"leave {w} as it is", "correct the lab state (read the instrument back)"],
            )
        adds.append((w, round(value - have, 4)))
    if all(v <= 1e-6 for _, v in adds):
        raise Refuse(
            f"every well already holds {fmt(value, 'uL')}: nothing to top up", "nothing_to_do"
        )
    liquid = _filler(frame, p)
    src = r.source_of(liquid, sum(v for _, v in adds), world, {(plate, w) for w in wells})
    ops = [pip.Op(src, (plate, w), v, *am.mixed_after(frame)) for w, v in adds if v > 1e-6]
    how = _emit(frame, p, plate, wells, ops)
    return (
        f"top up {plate} {wells[0]}..{wells[-1]} ({len(wells)} wells) to {fmt(value, 'uL')} with "
        f"{liquid} ({src[0]} {src[1]}): the difference per well from the lab state ({how})"
    )


def _emit(frame: Frame, p: r.Planning, plate: str, wells: list[str], ops: list[pip.Op]) -> str:
    """Emit a top-up's moves with the clause's channels and tips; say how (for the trace)."""
    channels = frame.ents.channels or p.channels or 1
    policy = pip.policy_used(ops, frame.ents.tips or p.tips)
    pip.emit(p.world, p.world.labware(plate).instrument, ops, channels, policy)
    p.policies_used.append(pip.POLICIES[policy])
    p.plate, p.wells = plate, wells
    return f"{'8 channels' if channels == 8 else '1 channel'}; tips: {pip.POLICIES[policy]}"


def _filler(frame: Frame, p: r.Planning) -> str:
    """The liquid a top-up adds: the one after "with" / "using", else the clause's liquid."""
    added = [  # "normalise the DNA in ... to 50 uL with water": water is what goes in
        m for m in frame.ents.liquids if _ADDED_WITH.search(frame.text[: m.start])
    ]
    mention = added[0] if added else frame.liquid
    held = wells_named_by(frame, p)  # "each culture well": what is in them, not what goes in
    liquid = r.liquid(mention, p) if mention else None
    if liquid is None or (liquid == held and not added):
        raise Ask("Which liquid should I top the wells up with?", ["liquid"], r.liquids(p.world))
    return liquid


def _add_each(frame: Frame, p: r.Planning, volume: float) -> str:
    """ "Top each well up with 15 uL water": the same volume into every well, one source."""
    world = p.world
    r.positive_volume(volume, f"{volume:g} uL")
    plate, wells = _wells(frame, p, "top up")
    liquid = _filler(frame, p)
    world.room_for_each(plate, wells, volume)  # capacity before the source
    src = r.source_of(liquid, volume * len(wells), world, {(plate, w) for w in wells})
    ops = [pip.Op(src, (plate, w), volume, *am.mixed_after(frame)) for w in wells]
    how = _emit(frame, p, plate, wells, ops)
    return (
        f"add {fmt(volume, 'uL')} {liquid} ({src[0]} {src[1]}) to each of {plate} "
        f"{wells[0]}..{wells[-1]} ({len(wells)} wells), on top of what they hold ({how})"
    )
