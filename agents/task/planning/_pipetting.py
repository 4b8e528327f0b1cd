"""Liquid moves -> liquid-handler commands, with the channels and the tip use asked for.

A family builder lists what should move (:class:`Op`: a volume from one well to another, or
to waste, optionally mixed after) and says how: one channel or the 8-channel head, and a tip
policy. This module groups the moves into tip uses and emits the commands on the planning
world, which checks every volume against the wells and the tips as it goes:

- one channel: a ``transfer`` command where it says exactly what is meant (one source, one
  volume, one tip or a tip per destination, no split); otherwise the primitive commands
  (``pick_up_tips``, ``aspirate``, ``dispense``, ``mix``, ``drop_tips``) with channel 0;
- 8 channels: moves into one column of a plate go together, channel i on row i, with one
  ``pick_up_tips`` of a tip column, one ``aspirate`` and one ``dispense`` per column.

Tip policies (:data:`POLICIES`): a new tip whenever the source changes (the default; when a
move mixes in its destination, the tip has touched that well, so every destination gets a new
one unless the person said otherwise), a new tip for every destination, one tip (or one set of
8) for everything, a new set of tips for every column. A volume above a tip's capacity is
split into passes with the same tip. Liquid sent to waste stays in the tip, which is dropped.
"""

from __future__ import annotations

from agents.task.planning._eight import batches, eight, groups_8
from agents.task.planning._moves import POLICIES, Op, TipPolicy, passes, policy_used
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._world import World

__all__ = ["POLICIES", "SHARED", "Op", "TipPolicy", "emit", "passes", "policy_used"]

# The policies whose tip serves the next piece from the same source (held until it comes)
SHARED = ("per_source", "once")
_EPS = 1e-6


def _groups(ops: list[Op], policy: TipPolicy, key: object) -> list[list[Op]]:
    """Ops in tip uses: a new group where the policy takes a new tip."""
    groups: list[list[Op]] = []
    for op in ops:
        last = groups[-1][-1] if groups else None
        new = (
            last is None
            or last.dst is None  # liquid to waste leaves with its tip
            or (policy == "per_destination")
            or (policy == "per_source" and last.src != op.src)
            or (policy == "per_column" and key(last) != key(op))  # type: ignore[operator]
            or (policy == "per_row" and _row(last) != _row(op))
        )
        if new:
            groups.append([op])
        else:
            groups[-1].append(op)
    return groups


def emit(
    world: World, lh: str, ops: list[Op], channels: int, policy: TipPolicy, ordered: bool = False
) -> list[str]:
    """Plan ``ops`` on ``lh``; return the ids of the steps emitted."""
    if same := [op.src for op in ops if op.dst == op.src]:
        lw, well = same[0]  # liquid taken from a well and put back: never what was meant
        raise Ask(
            f"That would take liquid out of {lw} {well} and put it back in the same well: "
            "where should it go?",
            ["destination"],
        )
    first = len(world.steps)
    for lw in {op.src[0] for op in ops} | {op.dst[0] for op in ops if op.dst}:
        world.at_home(lw)
    if channels == 1:
        if policy == "per_source" and not ordered:
            ops = _by_source(ops)
        groups = _groups(ops, policy, lambda op: (op.dst or op.src)[0:1] + _col(op))
        for run in _runs(world, groups):
            if len(run) > 1:  # a tip per destination, said by one command
                rack = world.rack_for(run[0][0].volume, len(run))
                for _ in run:
                    world.take_tips(run[0][0].volume, rack=rack)
                _transfer(world, lh, [g[0] for g in run], rack, "always")
            else:
                _single(world, lh, run[0])
    else:
        if not ordered:  # the head takes a column at a time (a 384 column: odd rows, even rows)
            ops = sorted(ops, key=lambda o: _column_order(world, o))
        for group in groups_8(batches(world, ops), policy):
            eight(world, lh, group)
    return [s.id for s in world.steps[first:]]


def _by_source(ops: list[Op]) -> list[Op]:
    """One source's moves together (one tip each under the default policy), sources in the
    order first named - unless a move takes from a well another fills (then order counts)."""
    if {o.src for o in ops} & {o.dst for o in ops if o.dst is not None}:
        return ops
    first = {o.src: i for i, o in reversed(list(enumerate(ops)))}
    return sorted(ops, key=lambda o: first[o.src])


def _column_order(world: World, op: Op) -> tuple[object, ...]:
    lw, well = op.dst or op.src
    row, col = ord(well[0]) - 65, int(well[1:])
    parity = row % 2 if world.labware(lw).rows == 16 else 0
    return (lw, col, op.src[0], int(op.src[1][1:]), parity, row)


def _runs(world: World, groups: list[list[Op]]) -> list[list[list[Op]]]:
    """Consecutive one-move tip uses that one ``transfer`` with ``new_tip='always'`` says."""
    runs: list[list[list[Op]]] = []
    last_dsts: set[tuple[str, str] | None] = set()  # where the last run's moves go
    for group in groups:
        op = group[0]
        fits = (
            len(group) == 1
            and op.dst is not None
            and op.volume <= world.tip_capacity() + _EPS
            and sum(len(s) for s in world.racks.values()) > 0
        )
        if fits and runs and len(runs[-1][0]) == 1:
            last = runs[-1][-1][0]
            if (
                last.dst is not None
                and op.dst is not None
                and (last.src, last.volume, last.mix_cycles, last.mix_volume, last.dst[0])
                == (op.src, op.volume, op.mix_cycles, op.mix_volume, op.dst[0])
                and op.dst not in last_dsts
            ):
                runs[-1].append(group)
                last_dsts.add(op.dst)
                continue
        runs.append([group])
        last_dsts = {op.dst}
    out: list[list[list[Op]]] = []
    for run in runs:
        try:
            ok = len(run) > 1 and world.rack_for(run[0][0].volume, len(run)) is not None
            ok = (
                ok
                and run[0][0].volume
                <= world.capacity(world.rack_for(run[0][0].volume, len(run))) + _EPS
            )
        except Refuse:
            ok = False
        out.extend([run] if ok or len(run) == 1 else [[g] for g in run])
    return out


def _row(op: Op) -> tuple[str, str]:
    lw, well = op.dst or op.src
    return lw, well[0]


def _col(op: Op) -> tuple[str, ...]:
    well = (op.dst or op.src)[1]
    return (well[1:],)


# --------------------------------------------------------------------------- one channel
def _as_transfer(world: World, group: list[Op], rack: str) -> bool:
    """One ``transfer`` command says it exactly: one source, one volume, one pass, same mix."""
    op0 = group[0]
    return (
        all(op.dst is not None for op in group)
        and len({(op.src, op.volume, op.mix_cycles, op.mix_volume, op.dst[0]) for op in group}) == 1  # type: ignore[index]
        and op0.volume <= world.capacity(rack) + _EPS
        and len({op.dst for op in group}) == len(group)
    )


def _single(world: World, lh: str, group: list[Op]) -> None:
    biggest = max(op.volume for op in group)
    rack = world.rack_for(biggest)
    if _as_transfer(world, group, rack):
        world.take_tips(biggest, rack=rack)
        _transfer(world, lh, group, rack, "once")
        return
    rack, spots = world.take_tips(biggest, rack=rack)
    world.emit(
        lh, "pick_up_tips", {"rack": rack, "spots": spots, "channels": [0]}, {"tips": {rack: spots}}
    )
    for op in group:
        parts = passes(op.volume, world.capacity(rack))
        for k, per in enumerate(parts):
            if op.dst is None and k:  # the tip left with the last pass's liquid: a new one
                world.emit(lh, "drop_tips", {"channels": [0]}, {})
                rack, spots = world.take_tips(per, rack=rack)
                world.emit(
                    lh,
                    "pick_up_tips",
                    {"rack": rack, "spots": spots, "channels": [0]},
                    {"tips": {rack: spots}},
                )
            world.pour(
                op.src[0],
                op.src[1],
                op.dst[0] if op.dst else op.src[0],
                op.dst[1] if op.dst else None,
                per,
            )
            world.emit(
                lh,
                "aspirate",
                {"labware": op.src[0], "wells": [op.src[1]], "volume_ul": per, "channels": [0]},
                {"wells": world.wells_expect([op.src])},
            )
            if op.dst is not None:
                world.emit(
                    lh,
                    "dispense",
                    {"labware": op.dst[0], "wells": [op.dst[1]], "volume_ul": per, "channels": [0]},
                    {"wells": world.wells_expect([op.dst])},
                )
        if op.mix_cycles and op.dst is not None:
            volume = _mix_volume(world, op, rack)
            world.emit(
                lh,
                "mix",
                {"labware": op.dst[0], "well": op.dst[1], "volume_ul": volume,
                 "repetitions": op.mix_cycles, "channel": 0},
                {"wells": world.wells_expect([op.dst])},
            )  # fmt: skip
    world.emit(lh, "drop_tips", {"channels": [0]}, {})


def _transfer(world: World, lh: str, group: list[Op], rack: str, new_tip: str) -> None:
    op0 = group[0]
    assert op0.dst is not None
    for op in group:
        assert op.dst is not None
        world.pour(op.src[0], op.src[1], op.dst[0], op.dst[1], op.volume)
    args: dict[str, object] = {
        "source": op0.src[0],
        "source_well": op0.src[1],
        "destination": op0.dst[0],
        "destination_wells": [op.dst[1] for op in group if op.dst],
        "volume_ul": op0.volume,
        "tip_rack": rack,
        "new_tip": new_tip,
    }
    if op0.mix_cycles:
        args["mix_after"] = op0.mix_cycles
        if op0.mix_volume is not None:
            args["mix_volume_ul"] = op0.mix_volume
    pairs = [op.dst for op in group if op.dst] + [op0.src]
    world.emit(lh, "transfer", args, {"wells": world.wells_expect(pairs)})


def _mix_volume(world: World, op: Op, rack: str) -> float:
    """The stated mixing volume, else the volume moved — never more than the well or the tip."""
    assert op.dst is not None
    have = world.well_volume(*op.dst)
    volume = op.mix_volume if op.mix_volume is not None else op.volume
    if op.mix_volume is not None and op.mix_volume > min(have, world.capacity(rack)) + _EPS:
        raise Refuse(
            f"mixing {op.mix_volume:g} uL needs more than {op.dst[0]} {op.dst[1]} holds "
            f"({have:g} uL) or a tip takes"
        )
    return round(min(volume, have, world.capacity(rack)), 3)


def no_such_tips(said: str, world: World) -> str:
    """Why a transfer said with tips of a size no rack holds ("with 50 uL tips") is refused:
    the racks the lab has, to name one instead."""
    racks = [
        f"{lw.id} ({lw.tip_max_volume_ul:g} uL)"
        for lw in world.lab.labware.values()
        if lw.kind == "tip_rack" and lw.tip_max_volume_ul > 0
    ]
    return (
        f"the lab has no {said}: its tip racks are {', '.join(racks)}; name one of them if it "
        "will do"
    )
