"""Wells said before the one plate they are on ("fill row B with 50 uL buffer on plate_1") are
that plate's wells, filled once: they were planned as two places, row B and then plate_1 row B
again, and every well got the volume twice."""

from __future__ import annotations

from collections import Counter

import pytest
from test_rule_planner import LAB

from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner

ROW_B = {f"B{c}" for c in range(1, 13)}
B1_B4 = {"B1", "B2", "B3", "B4"}


def _dispensed(request: str) -> Counter[tuple[str, str]]:
    plan = RulePlanner().plan(request, LAB)
    assert isinstance(plan, Plan), plan
    out: Counter[tuple[str, str]] = Counter()
    for s in plan.steps:
        if s.command == "transfer":
            for w in s.args["destination_wells"]:
                out[(str(s.args["destination"]), str(w))] += float(s.args["volume_ul"])
        elif s.command == "dispense":
            for w in s.args["wells"]:
                out[(str(s.args["labware"]), str(w))] += float(s.args["volume_ul"])
    return out


@pytest.mark.parametrize(
    ("request_text", "wells"),
    [
        ("fill row B with 50 uL buffer on plate_1", ROW_B),
        ("fill row B with 50 uL of buffer in plate_1", ROW_B),
        ("load row B with 50 uL buffer on plate_1", ROW_B),
        ("row B gets 50 uL buffer on plate_1", ROW_B),
        ("do row B with 50 uL buffer on plate_1", ROW_B),
        ("charge B1:B4 using 50 uL buffer in plate_1", B1_B4),
        ("spike B1:B4 using 50 uL buffer in plate_1", B1_B4),
        ("treat B1-B4 with 50 uL buffer, plate_1", B1_B4),
    ],
)
def test_wells_before_their_plate_are_filled_once(request_text: str, wells: set[str]) -> None:
    got = _dispensed(request_text)
    assert got == {("plate_1", w): 50.0 for w in wells}


def test_wells_before_two_plates_are_asked_about() -> None:
    plan = RulePlanner().plan("fill A1-A6 with 50 uL buffer on plate_1 and plate_2", LAB)
    assert not isinstance(plan, Plan)


def test_the_verb_top_before_a_column_is_no_top_column() -> None:
    col3 = {("plate_1", f"{r}3"): 50.0 for r in "ABCDEFGH"}
    assert _dispensed("top column 3 with 50 uL buffer on plate_1") == col3
    assert _dispensed("top column 3 of plate_1 with 50 uL buffer") == col3
    first = {("plate_1", f"{r}1"): 50.0 for r in "ABCDEFGH"}
    assert _dispensed("add 50 uL buffer to the first column of plate_1") == first
