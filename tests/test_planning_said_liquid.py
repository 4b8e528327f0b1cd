"""Judgement on what a request names: a reagent named with a source well that holds another
liquid is asked about (never planned under the well's liquid), while a class word or the well's
own liquid by another name plans; a well past the plate's last row is refused, never read as a
quadrant and dropped."""

from __future__ import annotations

import pytest

from agents.task.planning.models import Clarification, Plan, Refusal
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


def _plan(lab: str, request: str) -> Plan | Clarification | Refusal:
    return RulePlanner().plan(request, LABS[lab].view)


@pytest.mark.parametrize(
    ("lab", "request_"),
    [
        ("standard", "Add 20 uL of water from reservoir A1 to plate_1 A1-A6."),
        ("standard", "Transfer 50 ul ethanol from reservoir A2 into plate_2 B1:B12"),
        ("j6_tox", "Put 15 uL of PBS from res12 A1 into tox_384 E1-E6."),
        ("j6_tox", "Add 5 uL of EtOH from res12 A4 to tox_384 A1-A8."),
    ],
)
def test_a_reagent_its_source_well_does_not_hold_is_asked_about(lab: str, request_: str) -> None:
    said = _plan(lab, request_)
    assert isinstance(said, Clarification) and "liquid" in said.missing


@pytest.mark.parametrize(
    ("lab", "request_"),
    [
        ("j6_tox", "Add 20 uL of media from res12 A5 to tox_384 B1-B12."),  # a class word
        ("j6_tox", "Add 20 uL DMEM from res12 A5 to tox_384 B1-B12."),  # "MEM + 10% FBS"
        ("j6_tox", "Add 10 uL of Triton from res12 A3 to tox_384 D1-D4."),
        ("libprep_dev", "Add 20 uL of H2O from res A2 to norm_plate A1."),  # nuclease-free water
        ("standard", "Add 20 uL of dye from reservoir A1 to plate_1 A1."),
    ],
)
def test_the_wells_own_liquid_by_another_name_plans(lab: str, request_: str) -> None:
    assert isinstance(_plan(lab, request_), Plan)


@pytest.mark.parametrize(
    "request_",
    [
        "Put 20 uL of HBSS into well Q1 of tox_384.",
        "Put 20 uL of HBSS into wells A1 and Q1 of tox_384.",
        "put 20 uL HBSS in tox_384 row Q",
    ],
)
def test_a_well_past_the_last_row_is_refused_for_the_plate_size(request_: str) -> None:
    said = _plan("j6_tox", request_)
    assert isinstance(said, Refusal) and said.code == "plate_size"


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ("skip it, thanks", "nothing_to_do"),
        ("ignore my last message", "nothing_to_do"),
        ("Pipette 50 uL of dye into my mouth", "not_a_lab_request"),
        ("Log 50 uL buffer in the notebook for plate_1 A1", "not_a_lab_request"),
    ],
)
def test_what_is_no_work_is_refused_for_its_reason(request_: str, code: str) -> None:
    said = _plan("standard", request_)
    assert isinstance(said, Refusal) and said.code == code


@pytest.mark.parametrize(
    "request_",
    [
        "Shake plate_1 at 500 rpm for 5 min, then stop.",
        "Add 50 uL buffer to plate_1 A1-A3. That's all, thanks!",
        "Add 50 uL buffer to plate_1 A1 (cells in log phase)",
        "prime plate_2 A1-A12 with 100 ul buffer",
    ],
)
def test_the_end_of_the_work_and_fill_verbs_plan(request_: str) -> None:
    assert isinstance(_plan("standard", request_), Plan)


@pytest.mark.parametrize(
    "request_",
    [
        "Heat plate_1 to 37 C on the plate reader for 10 min.",
        "Incubate plate_1 at 37 C for 5 min on the liquid handler.",
    ],
)
def test_an_incubation_put_on_an_instrument_that_cannot_heat_is_refused(request_: str) -> None:
    said = _plan("standard", request_)
    assert isinstance(said, Refusal) and said.code == "missing_instrument"


def test_taken_out_of_a_well_into_another_is_a_transfer_not_a_discard() -> None:
    said = _plan("j6_tox", "Take 5 uL HBSS out of res12 A1 into dil_96 B1")
    assert isinstance(said, Plan)
    assert [s.command for s in said.steps] == ["transfer"]


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        ("Add 50 uL buffer to plate_1 A1-A4, 100 uL per well", Clarification),
        ("Add 400 uL buffer to plate_1 A1-A4, 100 uL per well", Plan),  # the total
        ("Add 100 uL buffer to plate_1 A1-A4, 100 uL per well", Plan),  # said twice
    ],
)
def test_a_volume_and_a_different_per_well_volume_are_asked_about(
    request_: str, expected: type
) -> None:
    assert isinstance(_plan("standard", request_), expected)
