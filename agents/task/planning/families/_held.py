"""The plate a liquid names: the one work plate that holds it ("to the cells in A1:A6",
"take 30 uL off each lysate in column 6"), and the check that the wells named hold it."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask


def beside(frame: Frame, p: r.Planning) -> str | None:
    """A liquid the clause names besides the one it moves, kept on one plate ("to the cells
    in A1:A6", "from the cells in row A"): the plate of wells named without one."""
    moved = frame.liquid.name if frame.liquid is not None else None
    for m in frame.ents.liquids:
        on = {lw for lw, _, _ in p.world.liquids.get(m.name, [])}
        if m.name != moved and len(on) == 1:
            return m.name
    return None


def taken_out(frame: Frame, p: r.Planning, what: str) -> str | None:
    """'take 30 uL off each lysate in column 6': the liquid taken out names its plate."""
    if what != "take liquid from" or frame.liquid is None:
        return None
    on = {lw for lw, _, _ in p.world.liquids.get(frame.liquid.name, [])}
    return frame.liquid.name if len(on) == 1 else None


def holds(p: r.Planning, plate: str, wells: list[str], liquid: str) -> None:
    """The wells a liquid's plate was found by must hold that liquid, else which is asked."""
    held = {w for lw, w, _ in p.world.liquids.get(liquid, []) if lw == plate}
    if not set(wells) <= held:
        raise Ask(
            f"{liquid} is on {plate}, but not in every well named: which wells should I take "
            "it from?",
            ["wells"],
            sorted(held, key=lambda w: (int(w[1:]), w[0]))[:6],
        )


_WELLS_OF = re.compile(r"\b[\w-]+?(?:e?s)?\s+wells\b", re.IGNORECASE)


def topped(p: r.Planning, plate: str, liquid: str | None) -> list[str]:
    """The wells a top-up of a whole plate means: those holding ``liquid`` ("the amplicon
    wells"), else every well when every well holds something (a part-filled plate is asked)."""
    world, lw = p.world, p.world.labware(plate)
    every = [f"{chr(65 + i)}{c}" for c in range(1, lw.cols + 1) for i in range(lw.rows)]
    if liquid is not None:
        return [w for w in every if world.contents.get((plate, w), {}).get(liquid, 0) > 0]
    held = [w for w in every if world.well_volume(plate, w) > 0]
    return held if len(held) == len(every) else []


_NAMES_WELLS = re.compile(r"(?:e?s)?\s+wells\b", re.IGNORECASE)


def described_wells(
    frame: Frame, p: r.Planning, plate: str, wells: list[str], at: int | None
) -> list[str]:
    """'the overnight culture wells in column 1' (the set written at ``at``): of those wells,
    the ones holding that liquid (never the empty rest of the column); none holding it is
    asked."""
    for m in frame.ents.liquids:
        between = frame.ents.text[m.end : at] if at is not None and at >= m.end else ""
        if not _NAMES_WELLS.match(between) or len(between) > 40 or re.search(r"[,;]", between):
            continue
        holding = set(topped(p, plate, m.name))
        kept = [w for w in wells if w in holding]
        if not kept:
            raise Ask(
                f"None of {plate} {wells[0]}..{wells[-1]} holds {m.name}: which wells did you "
                "mean?",
                ["wells"],
                sorted(holding, key=lambda w: (int(w[1:]), w[0]))[:6],
            )
        return kept
    return wells


def holding_any(p: r.Planning, plate: str) -> list[str]:
    """The wells of ``plate`` that hold something, column by column."""
    held = (w for (lid, w), v in p.world.volume.items() if lid == plate and v > 0)
    return sorted(held, key=lambda w: (int(w[1:]), w[0]))
