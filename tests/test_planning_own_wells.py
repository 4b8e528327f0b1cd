"""Safety: of two liquids said each with wells of its own ("Add 20 uL to plate_1: dye A1-A3,
buffer B1-B3"), the one no step draws is asked about - never the other liquid put into its
wells too. A liquid said as the place ("to the cells in A1:A6") is left alone."""

from __future__ import annotations

import pytest

from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


@pytest.mark.parametrize(
    ("lab", "request_"),
    [
        ("standard", "Add 20 uL to plate_1: dye A1-A3, buffer B1-B3."),
        ("standard", "Add 20 uL to plate_1: A1-A3 dye, B1-B3 buffer."),
        ("standard", "Add 20 uL dye and buffer to plate_1 (dye A1-A3, buffer B1-B3)."),
        ("lead_letters", "20 uL each into dst (A1-A3 PBS, B1-B3 stain)"),
    ],
)
def test_a_liquid_with_wells_of_its_own_is_never_left_out(lab: str, request_: str) -> None:
    said = RulePlanner().plan(request_, LABS[lab].view)
    assert isinstance(said, Clarification) and said.missing == ["liquid"], said


@pytest.mark.parametrize(
    ("lab", "request_"),
    [
        ("cells", "Add 50 uL medium to the cells in A1:A6."),
        ("standard", "Add 20 uL of dye to plate_1 A1-A3, then 20 uL buffer to B1-B3."),
    ],
)
def test_a_liquid_said_as_the_place_is_left_alone(lab: str, request_: str) -> None:
    assert isinstance(RulePlanner().plan(request_, LABS[lab].view), Plan)
