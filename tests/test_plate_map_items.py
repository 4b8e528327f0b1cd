"""A plate map's items said with commas ("A1-A3 DMSO 10 uL, B1-B3 DPBS 10 uL") are each a
transfer of their own liquid; an item's volume after a colon ("A1 dye: 10 uL") is its volume;
and an item that names a liquid the lab lacks ("row C water 20 uL") is asked about, never
given the liquid of the item before."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning._gapping import gaps
from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner


@pytest.mark.parametrize(
    ("text", "items"),
    [
        ("A1-A3 DMSO 10 uL, B1-B3 DPBS 10 uL", ["A1-A3 DMSO 10 uL", "B1-B3 DPBS 10 uL"]),
        ("A1-A3 10 uL DMSO, B1-B3 10 uL of DPBS", ["A1-A3 10 uL DMSO", "B1-B3 10 uL of DPBS"]),
        (
            "row A buffer 20 uL, row B dye 20 uL, and row C dye 20 uL",
            ["row A buffer 20 uL", "row B dye 20 uL", "row C dye 20 uL"],
        ),
    ],
)
def test_a_plate_maps_comma_items_are_cut_apart(text: str, items: list[str]) -> None:
    assert gaps(text, text) == items


@pytest.mark.parametrize(
    "text",
    ["A1-A3 10 uL, B1-B3 20 uL of DPBS", "add 10 uL DMSO to A1, A2 and A3"],
)
def test_a_list_of_one_liquid_is_not_cut_as_a_map(text: str) -> None:
    assert len(gaps(text, text)) == 1


def _transfers(request: str) -> dict[str, set[str]]:
    plan = RulePlanner().plan(request, LAB)
    assert isinstance(plan, Plan), plan
    out: dict[str, set[str]] = {}
    for s in plan.steps:
        if s.command == "transfer":
            out.setdefault(str(s.args["source_well"]), set()).update(s.args["destination_wells"])
    return out


@pytest.mark.parametrize(
    "request_text",
    [
        "plate_2: A1-A3 dye 10 uL, B1-B3 buffer 10 uL",
        "plate_2: A1-A3 dye: 10 uL, B1-B3 buffer: 10 uL",
    ],
)
def test_each_map_item_gets_its_own_liquid(request_text: str) -> None:
    # dye is the reservoir's A1, buffer its A2
    assert _transfers(request_text) == {"A1": {"A1", "A2", "A3"}, "A2": {"B1", "B2", "B3"}}


@pytest.mark.parametrize(
    "request_text",
    [
        "plate_2: row A buffer 20 uL, row C water 20 uL",
        "plate_2: row A buffer 20 uL; row C water 20 uL",
        "Add 20 uL buffer to plate_2 row A, then row C with water 20 uL",
    ],
)
def test_an_item_naming_a_liquid_the_lab_lacks_is_asked(request_text: str) -> None:
    asked = RulePlanner().plan(request_text, LAB)
    assert isinstance(asked, Clarification), asked
    assert "liquid" in asked.missing
