"""Where the wells are said: one well for n replicates is asked about unless the person says
which way the copies go; "in wells H2-H8 on plate_1" is one place; a purpose after the work
("to stop the edge wells drying out") is no place to pipette into."""

from __future__ import annotations

import pytest

from agents.task.planning._fact_pairs import facts_apart
from agents.task.planning._pipetting import Op
from agents.task.planning._remarks import is_purpose
from agents.task.planning._world import World
from agents.task.planning.families._tip_nouns import per_named
from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

_PLATES = frozenset({"EIA_plate", "SERA1"})


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


def test_two_facts_joined_by_and_become_two_claims() -> None:
    text = facts_apart("EIA_plate is still empty and SERA1 has 120 uL. Move 100 uL.", _PLATES)
    assert text.startswith("EIA_plate is still empty; SERA1 has 120 uL")


def test_an_and_inside_an_action_is_left_alone() -> None:
    text = "add 20 uL to EIA_plate A1 and SERA1 has 120 uL"
    assert facts_apart(text, _PLATES) == text


@pytest.mark.parametrize(
    "request_",
    [
        "Add 20 uL dye to plate_1 A1-A3, which already hold 50 uL buffer",
        "transfer 20 uL dye into plate_1 A1-A3 (each holding 50 uL buffer)",
        "take 20 uL from plate_1 A1 (it has 200 uL) into plate_2 A1",
        "plate_2 is empty and plate_1 has 50 uL buffer in A1. Add 20 uL dye to plate_1 A1.",
        "The buffer went into plate_1 column 2 earlier (100 uL each). Add 20 uL dye to it.",
    ],
)
def test_a_claim_about_what_wells_hold_is_checked_against_the_lab(standard, request_: str) -> None:  # type: ignore[no-untyped-def]
    answer = RulePlanner().plan(request_, standard)
    assert isinstance(answer, Clarification) and answer.missing == ["lab_state"]


def test_a_volume_to_reach_is_no_claim(standard) -> None:  # type: ignore[no-untyped-def]
    assert isinstance(
        RulePlanner().plan("add buffer to plate_1 A1 so it has 50 uL", standard), Plan
    )


def _ops(pairs: list[tuple[str, str]]) -> list[Op]:
    return [Op(("samples", a), ("dna_plate", b), 5.0, 0, None) for a, b in pairs]


def test_a_tip_per_the_liquid_moved_is_a_tip_per_source() -> None:
    world = World(Labs()["samples"].view)
    ops = _ops([("A1", "A4"), ("A1", "A5"), ("A2", "B4"), ("A2", "B5")])
    assert per_named("spot them in duplicate, one tip per sample", ops, world) == "per_source"


def test_a_tip_per_what_the_destinations_hold_is_a_tip_per_destination() -> None:
    world = World(Labs()["samples"].view)
    ops = [Op(("reservoir", "A2"), ("dna_plate", w), 5.0, 0, None) for w in ("A1", "B1")]
    assert per_named("add buffer, one tip per dna", ops, world) == "per_destination"


def test_a_tip_per_something_else_is_no_wish_read_here() -> None:
    world = World(Labs()["samples"].view)
    assert per_named("one tip per plate", _ops([("A1", "A4"), ("A2", "A5")]), world) is None
