"""A serial dilution that leaves its fold open asks once about everything else it leaves
open too (its plate, its wells, its volume), and never about what the request or the lab
already says."""

from __future__ import annotations

import pytest

from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


def _asked(request: str, lab: str = "standard") -> list[str]:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert result.kind == "clarification", result
    return list(result.missing)


@pytest.mark.parametrize(
    ("request_text", "open_"),
    [
        ("Prepare a dilution series of dye on plate_2", ["fold", "wells", "volume"]),
        ("serial dilution of dye across row A of plate_1", ["fold", "volume"]),
        ("do a standard curve of dye in column 1", ["fold", "plate", "volume"]),
        ("dye standard curve, 100 uL final, in buffer", ["fold", "plate"]),
        ("Serially dilute dye down column 2 of plate_1, 150 uL final", ["fold"]),
        ("serial dilution of dye across row A of plate_1, 100 uL per well", ["fold"]),
    ],
)
def test_a_series_without_a_fold_asks_about_all_it_leaves_open_at_once(
    request_text: str, open_: list[str]
) -> None:
    assert _asked(request_text) == open_


def test_a_series_on_wells_already_holding_liquid_does_not_ask_a_volume() -> None:
    # the diluent already in the wells may size them: the volume is not asked beside the fold
    asked = _asked("serially dilute the lysate down unk_plate column 1", "dil_bca")
    assert "volume" not in asked and "fold" in asked


def test_a_series_with_its_fold_asks_only_what_is_missing() -> None:
    assert _asked("Make a 1:3 dilution series of dye in buffer") == ["plate"]


def test_a_final_volume_is_no_step_volume() -> None:
    # "150 uL final" is what each well ends at: the fold is asked, never how much each step carries
    result = RulePlanner().plan(
        "Serially dilute dye 2-fold down column 2 of plate_1, 150 uL final", LABS["standard"].view
    )
    assert result.kind == "plan"
