"""What of a liquid-handler command happened, and what is left, operation by operation.

``summary`` says per well what was aspirated and dispensed (and how many mix cycles of how
many), per channel how many tips were picked up and dropped, and which destinations were
served; ``remainder`` gives the arguments of the same command that do exactly what is left
after its first ``done`` primitives happened (``None``: nothing is left).
"""

from __future__ import annotations

from typing import Any

from device_servers.liquid_handler.commands import (
    Aspirate,
    Dispense,
    DropTips,
    LHCommand,
    Mix,
    PickUpTips,
    Primitive,
    Transfer,
)


def _mix_pairs(prims: list[Primitive]) -> set[int]:
    """Indices of primitives that are mix cycles: an aspiration from a well followed, on the
    same channel, by a dispense back into it."""
    pairs: set[int] = set()
    last: dict[int, int] = {}
    for i, p in enumerate(prims):
        j = last.get(p.channel)
        if (
            p.op == "dispense"
            and j is not None
            and prims[j].op == "aspirate"
            and (prims[j].labware, prims[j].well) == (p.labware, p.well)
        ):
            pairs.update((i, j))
        last[p.channel] = i
    return pairs


def summary(prims: list[Primitive], done: int) -> dict[str, Any]:
    """Per well and per channel, ``[done, planned]`` of each kind of operation."""
    mixes = _mix_pairs(prims)
    wells: dict[str, dict[str, list[float]]] = {}
    channels: dict[str, dict[str, list[int]]] = {}
    for i, p in enumerate(prims):
        happened = i < done
        if p.op in ("pick", "drop"):
            entry = channels.setdefault(str(p.channel), {"picked": [0, 0], "dropped": [0, 0]})
            key = "picked" if p.op == "pick" else "dropped"
            entry[key][1] += 1
            entry[key][0] += int(happened)
            continue
        cell = wells.setdefault(
            f"{p.labware}:{p.well}",
            {"aspirated_ul": [0.0, 0.0], "dispensed_ul": [0.0, 0.0], "mix_cycles": [0, 0]},
        )
        if i in mixes:
            if p.op == "dispense":  # a cycle counts once it is whole
                cell["mix_cycles"][1] += 1
                cell["mix_cycles"][0] += int(happened)
            continue
        key = "aspirated_ul" if p.op == "aspirate" else "dispensed_ul"
        cell[key][1] += p.volume
        cell[key][0] += p.volume if happened else 0.0
    served = [
        w
        for w, c in wells.items()
        if c["dispensed_ul"][1] > 0
        and c["dispensed_ul"][0] >= c["dispensed_ul"][1]
        and c["mix_cycles"][0] >= c["mix_cycles"][1]
    ]
    not_served = [w for w, c in wells.items() if c["dispensed_ul"][1] > 0 and w not in served]
    return {"wells": wells, "channels": channels, "served": served, "not_served": not_served}


def remainder(cmd: LHCommand, prims: list[Primitive], done: int) -> dict[str, Any] | None:
    """Arguments of ``cmd``'s command that do exactly what is left after ``done`` of its
    ``prims`` happened; None when nothing is left."""
    if done >= len(prims):
        return None
    args = cmd.model_dump(mode="json")
    if done == 0:
        return args  # nothing happened: what is left is the whole command
    part = prims[done].part
    in_part = sum(1 for p in prims[:done] if p.part == part)
    if isinstance(cmd, Transfer):
        first = in_part + (cmd.first_done if part == 0 else 0)
        if cmd.new_tip == "once" and part > 0:
            first += 1  # the rest starts with the tip picked up for the first destination
        args.update(destination_wells=cmd.destination_wells[part:], first_done=first)
    elif isinstance(cmd, Mix):
        total = cmd.first_done + done
        args.update(repetitions=cmd.repetitions - total // 2, first_done=total % 2)
    elif isinstance(cmd, Aspirate | Dispense):
        chans = cmd.channels if cmd.channels is not None else list(range(len(cmd.wells)))
        args.update(wells=cmd.wells[part:], channels=chans[part:])
    elif isinstance(cmd, PickUpTips):
        args.update(channels=cmd.channels[part:])
        if cmd.spots is not None:
            args.update(spots=cmd.spots[part:])
    elif isinstance(cmd, DropTips):
        args.update(channels=[p.channel for p in prims[done:]])
    return args
