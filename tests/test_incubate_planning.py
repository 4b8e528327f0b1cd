"""Incubations on the heater-shaker: "the shaker" named as where an incubation happens is no
shaking asked for; a plate only put on the shaker, or shaken, is asked its speed."""

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
