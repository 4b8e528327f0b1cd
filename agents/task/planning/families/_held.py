"""The plate a liquid names: the one work plate that holds it ("to the cells in A1:A6",
"take 30 uL off each lysate in column 6"), and the check that the wells named hold it."""

from __future__ import annotations

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
