"""A request that leaves one thing open is asked about that thing, whatever verb it uses: a
vague verb with a liquid and wells ("handle plate_1 A1-A6 with buffer") is an addition missing
its volume; a plate put on the heater-shaker with only a time is asked whether to heat or to
shake; "put the <unknown> in plate_1 row A" is no plate move; a liquid the lab does not hold is
asked about with the volume; a question about what an instrument can do is no lab work."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning.rules import RulePlanner


@pytest.mark.parametrize(
    ("request_", "missing"),
    [
        ("handle plate_1 wells A1-A6 with buffer", ["volume"]),
        ("please deal with plate_2 column 3 using dye", ["volume"]),
        ("plate_2 on the heater-shaker for 5 min", ["temperature", "speed"]),
        ("put plate_2 on the heater-shaker for 5 min", ["temperature", "speed"]),
        ("plate_2 -> hs1, 700 rpm", ["duration"]),
        ("put the beads in plate_1 row A", ["volume", "liquid", "source"]),
        ("put the stop solution on plate_1 A1", ["volume", "liquid", "source"]),
    ],
)
def test_a_request_missing_one_thing_is_asked_about_that_thing(
    request_: str, missing: list[str]
) -> None:
    result = RulePlanner().plan(request_, LAB)
    assert result.kind == "clarification" and result.missing == missing


@pytest.mark.parametrize(
    "request_",
    [
        "can the reader do fluorescence?",
        "does the heater-shaker go up to 95 C?",
        "can the robot pipette 0.5 uL?",
    ],
)
def test_a_question_about_what_an_instrument_can_do_is_no_lab_work(request_: str) -> None:
    result = RulePlanner().plan(request_, LAB)
    assert result.kind == "refusal" and result.code == "not_a_lab_request"


@pytest.mark.parametrize(
    "request_",
    [
        "shake plate_2 at 800 rpm for 2 min",
        "plate_2 on the heater-shaker, 37 C for 10 min",
        "can you read plate_1 at 450 nm?",
        "put plate_1 in hotel 1",
    ],
)
def test_complete_requests_beside_them_are_planned(request_: str) -> None:
    assert RulePlanner().plan(request_, LAB).kind == "plan"


@pytest.mark.parametrize(
    ("request_", "missing"),
    [
        ("do the usual wash on plate_1", ["liquid", "volume"]),
        ("give plate_1 a quick rinse with buffer", ["volume"]),
    ],
)
def test_a_wash_said_as_a_noun_asks_what_it_leaves_open(request_: str, missing: list[str]) -> None:
    result = RulePlanner().plan(request_, LAB)
    assert result.kind == "clarification" and result.missing == missing


def test_tips_of_a_size_no_rack_holds_are_refused_not_swapped() -> None:
    result = RulePlanner().plan("add 5 uL buffer to plate_1 A1 with 10 uL tips", LAB)
    assert result.kind == "refusal" and result.code == "tips"


@pytest.mark.parametrize("request_", ["I love centrifuges", "what is a thermocycler used for"])
def test_talk_about_an_instrument_the_lab_lacks_is_no_lab_work(request_: str) -> None:
    result = RulePlanner().plan(request_, LAB)
    assert result.kind == "refusal" and result.code == "not_a_lab_request"
