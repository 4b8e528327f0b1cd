"""Incubations and plate moves: "the shaker" named as where an incubation happens is no
shaking asked for; a plate only put on the shaker, or shaken, is asked its speed; a plate taken
to the shaker with its settings is worked there; a place said alone after a step is a move."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner


def _plan(request: str) -> Plan | Clarification:
    result = RulePlanner().plan(request, LAB)
    assert isinstance(result, Plan | Clarification), result
    return result


@pytest.mark.parametrize(
    ("request_text", "command"),
    [
        ("incubate plate_1 5 min at 37 C on the shaker", "hold"),
        ("keep plate_1 on the shaker at 30 C for 1 h", "hold"),
        ("incubate plate_1 on the shaker at 37 C for 5 min at 400 rpm", "shake"),
    ],
)
def test_the_shaker_named_as_the_place_of_an_incubation_is_no_shaking(
    request_text: str, command: str
) -> None:
    plan = _plan(request_text)
    assert isinstance(plan, Plan)
    assert command in {s.command for s in plan.steps}
    if command == "hold":
        assert "shake" not in {s.command for s in plan.steps}


@pytest.mark.parametrize(
    "request_text",
    ["put plate_1 on the shaker for 5 min", "incubate plate_1 at 37 C for 5 min with shaking"],
)
def test_a_plate_put_on_the_shaker_or_shaken_is_asked_its_speed(request_text: str) -> None:
    asked = _plan(request_text)
    assert isinstance(asked, Clarification)
    assert "speed" in asked.missing


@pytest.mark.parametrize(
    ("request_text", "command"),
    [
        ("move plate_1 to the shaker for 3 min at 600 rpm", "shake"),
        ("take plate_1 to the shaker, 600 rpm 3 min", "shake"),
        ("bring plate_1 to the heater-shaker at 37 C for 10 min", "hold"),
    ],
)
def test_a_plate_taken_to_the_shaker_with_its_settings_is_shaken_or_held_there(
    request_text: str, command: str
) -> None:
    plan = _plan(request_text)
    assert isinstance(plan, Plan)
    assert command in {s.command for s in plan.steps}


def test_a_plate_only_taken_to_the_shaker_is_moved_there() -> None:
    plan = _plan("take plate_1 to the shaker")
    assert isinstance(plan, Plan)
    assert {s.command for s in plan.steps} & {"shake", "hold"} == set()


@pytest.mark.parametrize(
    ("request_text", "place"),
    [
        ("read plate_1 at 600 nm, then hotel 2", "hotel:2"),
        ("read plate_1 at 600 nm; hotel 1", "hotel:1"),
    ],
)
def test_a_place_said_alone_after_a_step_moves_the_plate_there(
    request_text: str, place: str
) -> None:
    plan = _plan(request_text)
    assert isinstance(plan, Plan)
    moves = [s.args.get("to_location") for s in plan.steps if s.command == "move_plate"]
    assert moves[-1] == place
