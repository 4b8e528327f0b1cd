"""The forms a request takes across families: a volume in words with a fraction ("half a mL",
"one and a half mL"), a total named after its liquid ("300 uL PBS total split across ..."), and
a volume said once for a semicolon list of picks ("Cherry pick (20 uL each): X -> Y; ...")."""

from __future__ import annotations

import pytest

from agents.task.planning._numberwords import digits
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("half a mL of PBS", "0.5 mL of PBS"),
        ("one and a half mL", "1.5 mL"),
        ("a quarter of a mL", "0.25 mL"),
        ("three-quarters of a millilitre", "0.75 millilitre"),
        ("two and a half minutes", "2.5 minutes"),
        ("half an hour", "0.5 hour"),
    ],
)
def test_a_fraction_of_a_unit_is_written_in_digits(said: str, written: str) -> None:
    assert digits(said) == written


def test_half_of_a_plate_is_no_number() -> None:
    assert digits("fill half the plate") == "fill half the plate"


def _volumes(request: str, lab: str) -> list[float]:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan), result
    return [s.args["volume_ul"] for s in result.steps if "volume_ul" in s.args]


@pytest.mark.parametrize(
    "request_",
    [
        "300 uL PBS total split across bca_plate A1-A3",
        "add 300 uL of PBS in total to bca_plate A1-A3",
        "a total of 300 uL PBS over bca_plate A1-A3",
    ],
)
def test_a_total_named_after_its_liquid_is_shared_out(request_: str) -> None:
    assert set(_volumes(request_, "r7f_bca")) == {100.0}


@pytest.mark.parametrize(
    "request_",
    [
        "Cherry pick (20 uL each): cmpd_src H1 -> mid_plate F1; cmpd_src H6 -> mid_plate F2",
        "Cherry-pick from cmpd_src into mid_plate; 20 uL each; H1 to F1; H6 to F2; H12 to F3",
    ],
)
def test_a_volume_said_once_heads_every_semicolon_pick(request_: str) -> None:
    assert set(_volumes(request_, "r7f_hts")) == {20.0}


@pytest.mark.parametrize(
    "request_",
    [
        "transfer cmpd_src H1 -> mid_plate F1; cmpd_src H6 -> mid_plate F2; 20 uL each",
        "Pick: cmpd_src A3 to mid_plate A1; cmpd_src B7 to mid_plate A2 - 20 uL each, new tips",
        "Pick list (20 uL each): cmpd_src A2 -> scr384 A1; cmpd_src A4 -> scr384 A2",
    ],
)
def test_a_volume_said_once_before_or_after_semicolon_pairs_is_every_pair_s(request_: str) -> None:
    volumes = _volumes(request_, "r7f_hts")
    assert len(volumes) >= 2 and set(volumes) == {20.0}


def test_a_liquid_named_after_a_chemistry_is_moved_not_read() -> None:
    assert set(_volumes("Split 240 uL of luciferase reagent across scr384 D1-D8", "r7f_hts")) == {
        30.0
    }


@pytest.mark.parametrize(
    "request_",
    [
        "Dispense 300 uL PBS, split over bca_plate C1, C2 and C3",
        "a total volume of 300 uL PBS divided among bca_plate D1-D3",
        "100 uL PBS into bca_plate F1-F3, 300 uL altogether",
    ],
)
def test_a_total_said_every_way_is_shared_out_or_agrees(request_: str) -> None:
    assert set(_volumes(request_, "r7f_bca")) == {100.0}


def test_a_total_that_disagrees_with_the_volume_per_well_is_asked() -> None:
    result = RulePlanner().plan(
        "150 uL PBS into bca_plate F1-F4, 500 uL in total", LABS["r7f_bca"].view
    )
    assert not isinstance(result, Plan) and result.missing == ["volume"]


def test_a_tip_wish_for_a_kind_of_liquid_is_that_liquid_s_alone() -> None:
    request_ = (
        "Add 50 uL PBS to bca_plate E1-E6, then 10 uL cell lysate from lysates A1-A6 into E1-E6."
        " Tips can be reused for the buffer."
    )
    result = RulePlanner().plan(request_, LABS["r7f_bca"].view)
    assert isinstance(result, Plan)
    lysate = [s for s in result.steps if s.args.get("source") == "lysates"]
    assert len(lysate) == 6  # a tip for each lysate well: the wish was the buffer's
