"""Work for an instrument the lab does not have ("weigh out 5 g of NaCl", "measure the pH of
the buffer") is refused for that instrument, never called "not a lab request" and never
planned on another instrument."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning.rules import RulePlanner


@pytest.mark.parametrize(
    ("request_", "kind"),
    [
        ("weigh out 5 g of NaCl", "balance"),
        ("please weigh the tip box", "balance"),
        ("autoclave the tip boxes", "autoclave"),
        ("put the waste in the autoclave", "autoclave"),
        ("measure the pH of the buffer", "pH meter"),
        ("adjust pH to 7.4 with NaOH", "pH meter"),
        ("count the cells in plate_1 A1", "cell counter"),
        ("vortex the dye tube", "vortex mixer"),
        ("Vortex the stock tubes, then add 50 uL dye to plate_1 A1", "vortex mixer"),
        ("scan the barcode on plate_1", "barcode scanner"),
    ],
)
def test_work_for_an_instrument_the_lab_lacks_is_refused_for_it(request_: str, kind: str) -> None:
    result = RulePlanner().plan(request_, LAB)
    assert result.kind == "refusal" and result.code == "missing_instrument", result
    assert f"no {kind}" in result.reason


def test_a_plate_vortexed_is_shaken_on_the_heater_shaker_not_refused() -> None:
    result = RulePlanner().plan("vortex plate_1 for 10 s", LAB)
    assert result.kind == "clarification" and "speed" in result.missing
