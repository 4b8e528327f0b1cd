"""The 8-channel head: moves into one column of a plate go together, channel i on row i.

One ``pick_up_tips`` of a tip column (only the channels a column needs), one ``aspirate`` and
one ``dispense`` per column and pass, mixing as aspirate/dispense cycles on the column, one
``drop_tips``. A 384-well plate's column is served on every other row (A, C, E, ... or B, D,
...), one parity at a time. Tip uses follow the same policies as one channel.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.task.planning._moves import Op, TipPolicy, passes
from agents.task.planning._outcomes import Refuse
from agents.task.planning._world import World

_EPS = 1e-6


@dataclass
class _Batch:
    """Moves done together by the 8-channel head: one column of a plate, one row per channel."""

    src_lw: str
    dst_lw: str | None
    channels: list[int]
    src_wells: list[str]
    dst_wells: list[str]
    volume: float
    mix_cycles: int
    mix_volume: float | None


def _row(well: str) -> int:
    return ord(well[0]) - 65


def _channel(world: World, lw: str, well: str) -> int:
    rows = world.labware(lw).rows
    r = _row(well)
    if rows <= 8:
        return r
    if rows == 16:
        return r // 2
    raise Refuse(
        f"the 8-channel head cannot reach {lw} ({rows} rows) one column at a time", "plate_size"
    )


def batches(world: World, ops: list[Op]) -> list[_Batch]:
    batches: list[_Batch] = []
    for op in ops:
        target = op.dst or op.src
        ch = _channel(world, *target)
        src_rows = world.labware(op.src[0]).rows
        if op.dst is not None and src_rows > 1 and _channel(world, *op.src) != ch:
            raise Refuse(
                f"with the 8-channel head, {op.src[0]} {op.src[1]} and {op.dst[0]} {op.dst[1]} "
                "are on different channels: the source and destination rows must match",
                "unsafe",
            )
        b = batches[-1] if batches else None
        same = (
            b is not None
            and b.src_lw == op.src[0]
            and b.dst_lw == (op.dst[0] if op.dst else None)
            and ch not in b.channels
            and abs(b.volume - op.volume) < _EPS
            and (b.mix_cycles, b.mix_volume) == (op.mix_cycles, op.mix_volume)
            and (target[1][1:] == (b.dst_wells or b.src_wells)[0][1:])
            and (op.dst is None or src_rows == 1 or op.src[1][1:] == b.src_wells[0][1:])
            and (  # a 384-well column: every other row at a time
                world.labware(target[0]).rows != 16
                or _row(target[1]) % 2 == _row((b.dst_wells or b.src_wells)[0]) % 2
            )
        )
        if same and b is not None:
            b.channels.append(ch)
            b.src_wells.append(op.src[1])
            if op.dst:
                b.dst_wells.append(op.dst[1])
            continue
        batches.append(
            _Batch(op.src[0], op.dst[0] if op.dst else None, [ch], [op.src[1]],
                   [op.dst[1]] if op.dst else [], op.volume, op.mix_cycles, op.mix_volume)
        )  # fmt: skip
    return batches


def _column(b: _Batch) -> tuple[str | None, str]:
    """The plate column a batch works in (a 384 column takes two batches: odd, even rows)."""
    return (b.dst_lw or b.src_lw, (b.dst_wells or b.src_wells)[0][1:])


def _rows(b: _Batch) -> tuple[str, ...]:
    return tuple(w[0] for w in b.dst_wells or b.src_wells)


def _by_source(batches: list[_Batch]) -> list[_Batch]:
    """A copy to several plates ("stamp MP-07 onto DP-07a and DP-07b"): each source column's
    dispenses together, so its tips serve all its destinations - never when a well filled
    here is a source too (a chain's order is its meaning)."""
    filled = {(b.dst_lw, w) for b in batches for w in b.dst_wells}
    if any((b.src_lw, w) in filled for b in batches for w in b.src_wells):
        return batches
    first: dict[tuple[str, tuple[str, ...]], int] = {}
    for i, b in enumerate(batches):
        first.setdefault((b.src_lw, tuple(b.src_wells)), i)
    return sorted(batches, key=lambda b: first[(b.src_lw, tuple(b.src_wells))])


def groups_8(batches: list[_Batch], policy: TipPolicy) -> list[list[_Batch]]:
    groups: list[list[_Batch]] = []
    if policy == "per_source":
        batches = _by_source(batches)
    for b in batches:
        last = groups[-1][-1] if groups else None
        new = (
            last is None
            or last.dst_lw is None
            or policy == "per_destination"
            or (policy == "per_column" and _column(last) != _column(b))
            or (policy == "per_row" and _rows(last) != _rows(b))  # each tip keeps to its row
            or (policy == "per_source" and (last.src_lw, last.src_wells) != (b.src_lw, b.src_wells))
        )
        if new:
            groups.append([b])
        else:
            groups[-1].append(b)
    return groups


def eight(world: World, lh: str, group: list[_Batch]) -> None:
    chans = sorted({c for b in group for c in b.channels})
    biggest = max(b.volume for b in group)
    rack, spots = world.take_tips(biggest, rows=chans)
    world.emit(
        lh,
        "pick_up_tips",
        {"rack": rack, "spots": spots, "channels": chans},
        {"tips": {rack: spots}},
    )
    cap = world.capacity(rack)
    for b in group:
        for k, per in enumerate(passes(b.volume, cap)):
            if b.dst_lw is None and k:  # to waste: the tips left with the liquid, new ones
                world.emit(lh, "drop_tips", {"channels": chans}, {})
                rack, spots = world.take_tips(per, rows=chans, rack=rack)
                world.emit(
                    lh,
                    "pick_up_tips",
                    {"rack": rack, "spots": spots, "channels": chans},
                    {"tips": {rack: spots}},
                )
            for i, _ch in enumerate(b.channels):
                dst = (b.dst_lw, b.dst_wells[i]) if b.dst_lw else None
                world.pour(
                    b.src_lw,
                    b.src_wells[i],
                    dst[0] if dst else b.src_lw,
                    dst[1] if dst else None,
                    per,
                )
            world.emit(
                lh,
                "aspirate",
                {
                    "labware": b.src_lw,
                    "wells": list(b.src_wells),
                    "volume_ul": per,
                    "channels": list(b.channels),
                },
                {"wells": world.wells_expect((b.src_lw, w) for w in b.src_wells)},
            )
            if b.dst_lw is not None:
                world.emit(
                    lh,
                    "dispense",
                    {
                        "labware": b.dst_lw,
                        "wells": list(b.dst_wells),
                        "volume_ul": per,
                        "channels": list(b.channels),
                    },
                    {"wells": world.wells_expect((b.dst_lw, w) for w in b.dst_wells)},
                )
        if b.mix_cycles and b.dst_lw is not None:
            have = min(world.well_volume(b.dst_lw, w) for w in b.dst_wells)
            volume = round(min(b.mix_volume or b.volume, have, cap), 3)
            for _ in range(b.mix_cycles):
                for command in ("aspirate", "dispense"):
                    world.emit(
                        lh,
                        command,
                        {
                            "labware": b.dst_lw,
                            "wells": list(b.dst_wells),
                            "volume_ul": volume,
                            "channels": list(b.channels),
                        },
                        {},
                    )
    world.emit(lh, "drop_tips", {"channels": chans}, {})
