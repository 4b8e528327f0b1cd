"""Physical effects counted against the approved plan: what each well and plate may receive.

The judge's own reading of a plan, written independently of the servers' expansion: a
``transfer`` of v uL from S to wells D1..Dn with m mix cycles asks, per destination, one
aspiration of v from S, one dispense of v into D and m mix cycles (an aspiration and a
dispense of the mix volume in D); ``aspirate``/``dispense`` ask one operation per well;
``mix`` asks its repetitions; ``move_plate`` asks one placement of the plate at its
destination. The world's log of physical operations is counted the same way, so any well
that received more dispenses (or more volume) than the plan asked shows, whatever the
attempts or action ids that did it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

# (instrument, op, labware or plate, well or location)
Key = tuple[str, str, str, str]
COUNTED_OPS = ("aspirate", "dispense", "place_plate")
VOLUME_TOLERANCE_UL = 0.01


@dataclass
class Tally:
    """How many operations, and how much liquid, one key received."""

    count: int = 0
    volume: float = 0.0

    def add(self, volume: float) -> None:
        self.count += 1
        self.volume += volume


def _wells(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(w) for w in value or []]


def _number(value: Any, default: float = 0.0) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def step_effects(
    instrument: str, command: str, args: dict[str, Any]
) -> Iterator[tuple[Key, float]]:
    """Every counted operation one plan step asks for, with its volume."""
    if command == "transfer":
        volume = _number(args.get("volume_ul"))
        mix = int(_number(args.get("mix_after")))
        mix_volume = _number(args.get("mix_volume_ul"), volume)
        source = (str(args.get("source")), str(args.get("source_well")))
        dest = str(args.get("destination"))
        for well in _wells(args.get("destination_wells")):
            yield (instrument, "aspirate", *source), volume
            yield (instrument, "dispense", dest, well), volume
            for _ in range(mix):
                yield (instrument, "aspirate", dest, well), mix_volume
                yield (instrument, "dispense", dest, well), mix_volume
    elif command in ("aspirate", "dispense"):
        volume = _number(args.get("volume_ul"))
        for well in _wells(args.get("wells")):
            yield (instrument, command, str(args.get("labware")), well), volume
    elif command == "mix":
        volume = _number(args.get("volume_ul"))
        key = (str(args.get("labware")), str(args.get("well")))
        for _ in range(int(_number(args.get("repetitions"), 3))):
            yield (instrument, "aspirate", *key), volume
            yield (instrument, "dispense", *key), volume
    elif command == "move_plate":
        yield (instrument, "place_plate", str(args.get("plate")), str(args.get("to_location"))), 0


def plan_budget(steps: Iterable[dict[str, Any]]) -> dict[Key, Tally]:
    """What the plan asks of every well and plate, summed over its steps."""
    budget: dict[Key, Tally] = {}
    for step in steps:
        for key, volume in step_effects(
            step["instrument"], step["command"], step.get("args") or {}
        ):
            budget.setdefault(key, Tally()).add(volume)
    return budget


def op_key(op: dict[str, Any]) -> Key | None:
    """The key of one world operation, or None if it is not a counted effect."""
    if op["op"] not in COUNTED_OPS:
        return None
    return (str(op["instrument"]), str(op["op"]), str(op.get("labware")), str(op.get("well")))


def world_tally(ops: Iterable[dict[str, Any]]) -> dict[Key, Tally]:
    """What every well and plate really received, from the world's operation log."""
    got: dict[Key, Tally] = {}
    for op in ops:
        key = op_key(op)
        if key is not None:
            got.setdefault(key, Tally()).add(_number(op.get("volume")))
    return got


def excess(budget: dict[Key, Tally], got: dict[Key, Tally]) -> Iterator[tuple[Key, Tally, Tally]]:
    """Keys that received more operations, or more volume, than the budget allows."""
    for key, tally in sorted(got.items()):
        allowed = budget.get(key, Tally())
        if tally.count > allowed.count or tally.volume > allowed.volume + VOLUME_TOLERANCE_UL:
            yield key, tally, allowed


def describe(key: Key, got: Tally, allowed: Tally) -> str:
    inst, op, labware, well = key
    if op == "place_plate":
        return f"{labware} placed at {well} {got.count}x by {inst}, the plan asks {allowed.count}"
    return (
        f"{labware}:{well} {op} {got.count}x ({got.volume:g} uL) by {inst}, "
        f"the plan asks {allowed.count}x ({allowed.volume:g} uL)"
    )
