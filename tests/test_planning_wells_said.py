"""Where the wells are said: one well for n replicates is asked about unless the person says
which way the copies go; "in wells H2-H8 on plate_1" is one place; a purpose after the work
("to stop the edge wells drying out") is no place to pipette into."""

from __future__ import annotations

import pytest

from agents.task.planning._remarks import is_purpose
from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs


@pytest.fixture(scope="module")
def standard():  # type: ignore[no-untyped-def]
    return Labs()["standard"].view


@pytest.mark.parametrize(
    "request_",
    [
        "In triplicate, add 50 uL buffer to plate_1 A1",
        "add 50 uL of buffer to plate_1 C2 in duplicate",
        "In duplicate: dye, 20 uL, plate_2 A1",
    ],
)
def test_one_well_for_several_replicates_is_asked_about(standard, request_: str) -> None:  # type: ignore[no-untyped-def]
    answer = RulePlanner().plan(request_, standard)
    assert isinstance(answer, Clarification) and answer.missing == ["wells"]


def test_replicates_said_to_go_side_by_side_fill_the_row(standard) -> None:  # type: ignore[no-untyped-def]
    answer = RulePlanner().plan(
        "add 50 uL buffer to plate_1 B1 in triplicate, side by side", standard
    )
    assert isinstance(answer, Plan)
    assert [w for s in answer.steps for w in s.args.get("destination_wells", [])] == [
        "B1",
        "B2",
        "B3",
    ]


def test_wells_on_a_plate_after_in_are_where_the_liquid_goes(standard) -> None:  # type: ignore[no-untyped-def]
    answer = RulePlanner().plan("put 150 uL buffer in wells H2-H8 on plate_1", standard)
    assert isinstance(answer, Plan)


@pytest.mark.parametrize(
    "text",
    [
        "to stop the edge wells drying out",
        "so the inner wells don't evaporate",
        "to keep the outer wells from drying out",
        "in order to prevent edge effects",
    ],
)
def test_a_purpose_is_no_place(text: str) -> None:
    assert is_purpose(text)


@pytest.mark.parametrize("text", ["to plate_1 A1-A6", "to stop_plate A1, 50 uL", "so add 5 uL"])
def test_places_and_volumes_are_no_purpose(text: str) -> None:
    assert not is_purpose(text)
