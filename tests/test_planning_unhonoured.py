"""A setting no step can carry (speed, blow-out, touch-off, air gap, tip height, flashes, a tip
every few wells) is asked about by name; words that only look like one are not."""

from __future__ import annotations

import pytest

from agents.task.planning._unhonoured import asked


@pytest.mark.parametrize(
    "text",
    [
        "transfer 50 uL to B1, aspirate slowly",
        "add 30 uL buffer to A1:A6 with blowout",
        "then blow out into the well",
        "with a 10 uL air gap",
        "touch off on the well wall",
        "tip touch after dispense",
        "dispense at the bottom of the well",
        "aspirate 2 mm above the bottom",
        "read at 450 nm with 10 flashes",
        "change tips every 4 wells",
        "new tip every other well",
        "changing tip after every 3rd well",
        "add 50 uL buffer to plate_1 A1-A3 at 50% speed",
        "dispense at 20 % of max dispense speed",
        "aspirate speed 30%, then dispense",
    ],
)
def test_a_setting_the_planner_cannot_carry_is_asked_about(text: str) -> None:
    ask = asked(text)
    assert ask is not None and ask.missing == ["mode"]


@pytest.mark.parametrize(
    "text",
    [
        "add 30 uL dye to plate_1 H1-H12, the bottom row",
        "add 30 uL dye to the bottom row of plate_1",
        "using one tip, add 25 uL buffer to every other well of row C",
        "add 50 uL to columns 1-4 with the 8-channel, new tips every column",
        "add 40 uL buffer to A1-A6, fresh tip for each well",
        "gently mix A1 3 times",
        "leave A7 and A8 untouched",
        "run a touchdown PCR on plate_1",
        "shake plate_1 at 50% speed for 5 min",
        "add 50 uL buffer to A1 (50% of the well)",
        "8 uL Tris-HCl 10 mM from reag_res -> qpcr_b A1",
    ],
)
def test_words_that_only_look_like_a_setting_are_not_asked_about(text: str) -> None:
    assert asked(text) is None
