"""Notebook spellings the planner reads as meant: a plate named with a possessive
("plate_1's column 1") is that plate, never the plural "plates" of the typo fixer; a written
fraction before a volume unit ("1/2 mL", "1 1/2 mL", "3/4 ml") is that volume, while "1/4"
with no unit after it stays a ratio."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning._numberwords import digits
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner


@pytest.mark.parametrize(
    ("written", "reads"),
    [("1/2 mL", "0.5 mL"), ("1 1/2 mL", "1.5 mL"), ("3/4 ml", "0.75 ml"), ("1/4 uL", "0.25 uL")],
)
def test_a_written_fraction_before_a_volume_unit_is_that_volume(written: str, reads: str) -> None:
    assert digits(f"add {written} buffer to A1") == f"add {reads} buffer to A1"


@pytest.mark.parametrize("ratio", ["dilute A1 1/4 in buffer", "a 1/2 dilution", "3/2 mL"])
def test_a_fraction_without_a_volume_unit_after_it_is_left_alone(ratio: str) -> None:
    assert digits(ratio) == ratio


@pytest.mark.parametrize(
    "request_text",
    [
        "add 50 uL buffer to plate_1's column 1",
        "transfer 20 uL from the reservoir's A1 to plate_2's B1",
    ],
)
def test_a_plate_named_with_a_possessive_is_that_plate(request_text: str) -> None:
    plan = RulePlanner().plan(request_text, LAB)
    assert isinstance(plan, Plan), plan
    transfers = [s for s in plan.steps if s.command == "transfer"]
    assert transfers and all(s.args["destination"] in ("plate_1", "plate_2") for s in transfers)


@pytest.mark.parametrize(
    ("request_text", "wells"),
    [
        ("Make 4 replicates of reservoir A1 in plate_1 B1-B4, 25 uL each", 4),
        ("dye, n=3, 20 uL, plate_1 B1-B3", 3),
    ],
)
def test_replicates_of_one_well_and_n_equals_are_counts_of_wells(
    request_text: str, wells: int
) -> None:
    plan = RulePlanner().plan(request_text, LAB)
    assert isinstance(plan, Plan), plan
    transfers = [s for s in plan.steps if s.command == "transfer"]
    assert sum(len(s.args["destination_wells"]) for s in transfers) == wells
    assert {s.args["volume_ul"] for s in transfers} != {3.0}  # n=3 is no volume
