"""'Every other well' thins exactly the wells it is said of, however it is written, and a
qualifier no well set reads is asked about, never planned on every well."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning._wellsets import find_all
from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner


@pytest.mark.parametrize(
    ("text", "wells"),
    [
        ("every other well from A1-A8", ["A1", "A3", "A5", "A7"]),
        ("alternate wells, A1 to A8, of #", ["A1", "A3", "A5", "A7"]),
        ("every other well: B1-B6", ["B1", "B3", "B5"]),
        ("every other well, starting at A2, of row A", [f"A{c}" for c in range(2, 13, 2)]),
        ("A1, A2, A3, A4, A5, A6 - every other well", ["A1", "A3", "A5"]),
        ("every other well of A1, A2, A3, A4", ["A1", "A3"]),
        ("odd wells only: C1-C6", ["C1", "C3", "C5"]),
        ("odd numbered wells of row D", [f"D{c}" for c in range(1, 12, 2)]),
        ("every third well of row A", ["A1", "A4", "A7", "A10"]),
    ],
)
def test_every_other_well_thins_the_set_it_is_said_of(text: str, wells: list[str]) -> None:
    (found,) = find_all(text)
    assert found.expand(8, 12) == wells


def test_a_well_qualifier_no_set_reads_is_asked_about() -> None:
    result = RulePlanner().plan("Even wells: 75 uL buffer into row B of plate_1", LAB)
    assert isinstance(result, Clarification) and result.missing == ["wells"]


def test_every_other_well_in_a_row_on_a_plate_is_the_destination() -> None:
    result = RulePlanner().plan("put 30 uL buffer in every other well of row A on plate_1", LAB)
    assert isinstance(result, Plan)
    assert result.steps[0].args["destination_wells"] == [f"A{c}" for c in range(1, 12, 2)]
