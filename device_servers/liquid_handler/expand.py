"""What a liquid-handler command consists of: its primitives, in order, on a twin's belief.

A transfer serves its destinations one after the other (pick up, aspirate, dispense, mix
cycles, drop); each primitive carries the ``part`` (destination, well, cycle) it serves. A
command that is the rest of an interrupted one (``first_done``) skips what already happened.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from device_servers.errors import Code, ValidationFailed
from device_servers.liquid_handler.commands import (
    Aspirate,
    Dispense,
    DropTips,
    LHCommand,
    Mix,
    Op,
    PickUpTips,
    Primitive,
    Transfer,
)

if TYPE_CHECKING:
    from device_servers.liquid_handler.twin import LiquidHandlerTwin


def expand(twin: LiquidHandlerTwin, cmd: LHCommand) -> Iterator[Primitive]:
    """The primitives ``cmd`` consists of on ``twin`` (tip spots may be resolved by apply)."""
    if isinstance(cmd, PickUpTips):
        if cmd.spots is not None and len(cmd.spots) != len(cmd.channels):
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                "spots and channels differ in length",
                "give one spot per channel, or leave spots out",
            )
        if len(set(cmd.channels)) != len(cmd.channels):
            raise ValidationFailed(
                Code.INVALID_ARGUMENT, "a channel is named twice", "name each channel once"
            )
        for i, ch in enumerate(cmd.channels):
            spot = cmd.spots[i] if cmd.spots is not None else None
            yield Primitive("pick", ch, cmd.rack, spot, part=i)
    elif isinstance(cmd, DropTips):
        chans = cmd.channels
        if chans is None:
            chans = [i for i, c in enumerate(twin.channels) if c.tip is not None]
            if not chans:
                raise ValidationFailed(
                    Code.NO_TIP, "no channel holds a tip", "nothing to drop; pick up tips first"
                )
        for i, ch in enumerate(chans):
            yield Primitive("drop", ch, "rack" if cmd.destination == "rack" else None, part=i)
    elif isinstance(cmd, Aspirate | Dispense):
        chans = cmd.channels if cmd.channels is not None else list(range(len(cmd.wells)))
        if len(chans) != len(cmd.wells):
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                "wells and channels differ in length",
                "give one well per channel",
            )
        op: Op = "aspirate" if isinstance(cmd, Aspirate) else "dispense"
        for i, (ch, well) in enumerate(zip(chans, cmd.wells, strict=True)):
            yield Primitive(op, ch, cmd.labware, well, cmd.volume_ul, part=i)
    elif isinstance(cmd, Mix):
        check_repetitions(cmd.repetitions)
        cycles = [
            Primitive(kind, cmd.channel, cmd.labware, cmd.well, cmd.volume_ul, part=i)
            for i in range(cmd.repetitions)
            for kind in ("aspirate", "dispense")
        ]
        yield from skip_done(cycles, cmd.first_done, "the mix")
    elif isinstance(cmd, Transfer):
        yield from _transfer(twin, cmd)
    else:  # pragma: no cover - the command table is closed
        raise ValidationFailed(Code.INVALID_ARGUMENT, f"unknown command {cmd!r}", "")


def check_repetitions(reps: int) -> None:
    if not 1 <= reps <= 50:
        raise ValidationFailed(
            Code.OUT_OF_RANGE, f"repetitions={reps} is out of range", "use 1 to 50 repetitions"
        )


def _transfer(twin: LiquidHandlerTwin, cmd: Transfer) -> Iterator[Primitive]:
    if cmd.first_done == 0 and twin.channels[0].tip is not None:
        raise ValidationFailed(
            Code.TIP_ALREADY_ATTACHED,
            "channel 0 already holds a tip",
            "drop_tips before a transfer; transfer picks up its own tips",
        )
    if cmd.mix_after:
        check_repetitions(cmd.mix_after)
    mix_vol = cmd.mix_volume_ul if cmd.mix_volume_ul is not None else cmd.volume_ul
    last = len(cmd.destination_wells) - 1
    for i, dest in enumerate(cmd.destination_wells):
        ops: list[Primitive] = []
        if cmd.new_tip == "always" or i == 0:
            ops.append(Primitive("pick", 0, cmd.tip_rack, None, part=i))
        ops.append(Primitive("aspirate", 0, cmd.source, cmd.source_well, cmd.volume_ul, part=i))
        ops.append(Primitive("dispense", 0, cmd.destination, dest, cmd.volume_ul, part=i))
        for _ in range(cmd.mix_after):
            ops.append(Primitive("aspirate", 0, cmd.destination, dest, mix_vol, part=i))
            ops.append(Primitive("dispense", 0, cmd.destination, dest, mix_vol, part=i))
        if cmd.new_tip == "always" or i == last:
            ops.append(Primitive("drop", 0, None, part=i))
        yield from (skip_done(ops, cmd.first_done, f"destination {dest}") if i == 0 else ops)


def skip_done(ops: list[Primitive], done: int, what: str) -> list[Primitive]:
    """The operations left after the first ``done`` of ``ops`` happened (a remainder)."""
    if done >= len(ops):
        raise ValidationFailed(
            Code.INVALID_ARGUMENT,
            f"first_done={done}, but {what} has only {len(ops)} operations",
            f"first_done is at most {len(ops) - 1}; leave out what is wholly done",
        )
    return ops[done:]
