"""Where a liquid is taken from: wells named right after a liquid kept in many wells of one
plate ("lysate columns 3 and 4"), and replicate layouts that keep each source's row."""

from __future__ import annotations

import pytest

from agents.task.planning._clauses import split
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._liquid_wells import liquid_wells
from agents.task.planning._normalise import normalise
from agents.task.planning._outcomes import Ask
from agents.task.planning._reading import _read
from agents.task.planning._world import World
from agents.task.planning.families._pairing import same_line
from evals.planning import Labs

LABS = Labs()


def _sources(lab: str, request: str) -> list[tuple[str | None, str | None]]:
    view = LABS[lab].view
    lex, norm = Lexicon(view), normalise(request)
    read_in = [_read(c, lex, norm.quoted) for c in split(norm, frozenset(lex.labware))]
    liquid_wells(read_in, World(view))
    return [
        (pl.labware.name if pl.labware else None, pl.wells.text if pl.wells else None)
        for f, _ in read_in
        if f is not None
        for role, pl in f.places
        if role == "source"
    ]


def test_wells_after_a_liquid_are_on_the_one_plate_holding_it_there() -> None:
    found = _sources("b2_bca", "1:10 of lysate columns 3 and 4 into quant2 columns 3-4 with PBS")
    assert found == [("lysates", "columns 3 and 4")]


def test_a_well_only_one_of_two_plates_holds_the_liquid_in_picks_that_plate() -> None:
    assert _sources("src_proteomics", "HeLa lysate H12 -> qc_96 H12, 30 uL") == [("lys_B", "H12")]


def test_wells_two_plates_hold_the_liquid_in_are_asked_about() -> None:
    with pytest.raises(Ask) as asked:
        _sources("src_proteomics", "10 uL of HeLa lysate A1-A4 into qc_96 A1-A4")
    assert asked.value.missing == ["source"]
    assert asked.value.options == ["lys_A", "lys_B"]


def test_wells_after_a_liquid_with_nowhere_to_go_are_left_as_they_are() -> None:
    assert _sources("b2_bca", "lysate A1-A4 50 uL") == []


def test_same_rows_takes_the_named_well_in_each_destination_row() -> None:
    named = [f"{r}1" for r in "ABCDEFGH"]
    listed = [f"{r}{c}" for c in (5, 6) for r in "ABCDEFGH"]
    assert same_line(listed, named, "20 uL into columns 5 and 6, same rows") == named + named


def test_same_positions_outside_the_named_source_wells_are_asked_about() -> None:
    with pytest.raises(Ask):
        same_line(["A7", "B7"], ["A3", "B3"], "5 uL into A7 and B7, same wells")
