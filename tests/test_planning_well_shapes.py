"""Well sets said by their shape or their count are the wells a person means: the corners,
the outer ring, the inner 60, 'A-H 1', 'wells 1-24' in reading order, 'row A wells 1-6'; and
a form's fields, whatever their keys, say one request (a tip field never names wells)."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning._tables import rewrite
from agents.task.planning._wellsets import find_all
from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner

_RING = [f"A{c}" for c in range(1, 13)] + [f"{r}{c}" for r in "BCDEFG" for c in (1, 12)]


@pytest.mark.parametrize(
    ("text", "rows", "cols", "wells"),
    [
        ("the four corner wells of #", 8, 12, ["A1", "A12", "H1", "H12"]),
        ("each corner well", 16, 24, ["A1", "A24", "P1", "P24"]),
        ("the corners of the A1-D4 block", 8, 12, ["A1", "A4", "D1", "D4"]),
        ("the outer ring of #", 8, 12, [*_RING, *(f"H{c}" for c in range(1, 13))]),
        ("the interior of #", 8, 12, [f"{r}{c}" for r in "BCDEFG" for c in range(2, 12)]),
        ("wells the inner 60", 8, 12, [f"{r}{c}" for r in "BCDEFG" for c in range(2, 12)]),
        ("# A-H 1", 8, 12, [f"{r}1" for r in "ABCDEFGH"]),
        ("wells 1-24", 8, 12, [f"{r}{c}" for r in "AB" for c in range(1, 13)]),
        ("wells 1-24", 16, 24, [f"A{c}" for c in range(1, 25)]),
        ("row A wells 1-6", 8, 12, [f"A{c}" for c in range(1, 7)]),
    ],
)
def test_a_set_said_by_its_shape_or_count_is_its_wells(
    text: str, rows: int, cols: int, wells: list[str]
) -> None:
    (found,) = find_all(text)
    assert found.expand(rows, cols) == wells


def test_a_letter_span_before_a_count_is_no_column() -> None:
    column_12 = [f"{r}12" for r in "ABCDEFGH"]
    assert column_12 not in [s.expand(8, 12) for s in find_all("rows A-H 12 times")]


@pytest.mark.parametrize(
    ("form", "said"),
    [
        (
            "Reagent: buffer\nTarget plate: plate_1\nWells: B1-B12\nVolume per well: 80 ul",
            "Add 80 ul buffer to plate_1 B1-B12",
        ),
        (
            "Volume: 120 uL\nLiquid: buffer\nPlate: plate_2\nWells: all",
            "Add 120 uL buffer to plate_2 all wells",
        ),
        (
            "Source: res A1\nTarget: p1\nTarget wells: H1-H12\nTransfer volume: 15 uL\n"
            "Tip change: every well",
            "Transfer from res A1 to p1, wells H1-H12, 15 uL, tips: every well",
        ),
    ],
)
def test_a_forms_fields_say_one_request(form: str, said: str) -> None:
    assert rewrite(form) == said


def test_a_plate_map_table_becomes_one_item_per_row_under_its_plate() -> None:
    table = "| well | liquid | volume |\n|---|---|---|\n| A1 | buffer | 100 uL |\n| A2 | dye | 40 |"
    assert rewrite(table + "\nplate: plate_1") == ("plate_1:\n- A1: 100 uL buffer\n- A2: 40 uL dye")


@pytest.mark.parametrize(
    "request_",
    [
        "Add 20 uL dye to plate_1 A1; also B1 and C1",
        "Put 20 uL dye into plate_1 A1, then B1-C1 as well",
        "plate_1 A1 gets 20 uL dye; B1-C1 gets the same",
        "Add dye:\n- plate_1 A1: 20 uL\n- plate_1 B1-C1: same",
    ],
)
def test_a_repeat_said_with_only_places_takes_the_clause_before(request_: str) -> None:
    result = RulePlanner().plan(request_, LAB)
    assert isinstance(result, Plan)
    moved = [w for s in result.steps for w in s.args.get("destination_wells", [])]
    assert sorted(moved) == ["A1", "B1", "C1"]


def test_a_repeat_after_two_moves_said_together_is_asked_about() -> None:
    result = RulePlanner().plan("Add 50 uL buffer to plate_1 A1 and 50 uL dye to A2; also B1", LAB)
    assert isinstance(result, Clarification)
