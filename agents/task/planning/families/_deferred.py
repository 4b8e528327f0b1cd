"""A serial-dilution sentence whose steps are the clauses around it ("2-fold serial dilution of
X down column 1 of P: 60 uL diluent in B1-H1, 90 uL compound in A1, move 30 uL each step"):
it plans nothing itself, and tells those clauses its plate, wells, head, tips and stock."""

from __future__ import annotations

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning.families import _chains as geometry
from agents.task.planning.families._stock_said import stock_or_none


def steps_said_apart(frame: Frame, p: r.Planning) -> str:
    """What the steps around the sentence leave out: where, how and which liquid."""
    frame.extra["kind"] = "fact"
    named = geometry.series_place(frame)
    if named is not None:
        p.plate = r.labware(named, p, "dilute on")
        view = p.world.labware(p.plate)
        p.wells = [w for ws_ in frame.ents.wellsets for w in ws_.expand(view.rows, view.cols)]
    p.channels = frame.ents.channels or p.channels
    p.tips = frame.ents.tips or p.tips
    p.stock = stock_or_none(frame, p)  # "then 90 uL compound in A1": what it dilutes
    return "a serial dilution: its steps are the clauses around it"
