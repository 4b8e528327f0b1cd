""" "The empty wells" said after another step are the wells holding nothing at that point of
the plan, the step before counted: never the whole plate, nor the wells just filled."""

from __future__ import annotations

import pytest
from test_plate_map_items import _transfers


@pytest.mark.parametrize(
    "request_text",
    [
        "Add 50 uL buffer to plate_2 row A, then 50 uL dye to the empty wells of plate_2",
        "Add 50 uL buffer to plate_2 row A, then fill the remaining empty wells with 50 uL dye",
        "Add 50 uL dye to the plate_2 wells still empty after adding 50 uL buffer to row A",
    ],
)
def test_the_empty_wells_after_a_step_are_those_it_left_empty(request_text: str) -> None:
    filled = _transfers(request_text)
    row_a = {f"A{c}" for c in range(1, 13)}
    assert filled["A2"] == row_a  # buffer into row A
    assert filled["A1"] == {f"{r}{c}" for r in "BCDEFGH" for c in range(1, 13)}  # dye after
