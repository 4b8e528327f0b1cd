"""A known verb with its settings left out ("top up plate_1", "block plate_2", "warm the buffer
to 37 C") is asked about what it leaves out: never "I did not understand", and never planned as
something else (pre-warming the heater-shaker is not warming a liquid in a trough)."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning.rules import RulePlanner


@pytest.mark.parametrize(
    ("request_", "missing"),
    [
        ("top up plate_1", ["volume"]),
        ("top off plate_1 A1:A6 with dye", ["volume"]),
        ("block plate_2", ["liquid", "volume"]),
        ("stain plate_2 row A", ["liquid", "volume"]),
        ("stop the reaction in plate_2 row A", ["liquid", "volume"]),
        ("give plate_2 fresh buffer", ["volume"]),
        ("plate the dye into plate_2", ["volume"]),
        ("warm the buffer to 37 C", ["plate", "duration"]),
    ],
)
def test_a_known_verb_missing_its_settings_asks_for_them_not_what_was_meant(
    request_: str, missing: list[str]
) -> None:
    result = RulePlanner().plan(request_, LAB)
    assert result.kind == "clarification" and result.missing == missing
