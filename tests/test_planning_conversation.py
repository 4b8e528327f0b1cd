"""What is said around and instead of an instruction: a read named by its dye with only its
ex/em, its wavelengths in the sentence after it, and questions whose answer is a number worked
out from data (not lab requests). Each rule is also tried against what must not trigger it."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning import _not_lab as not_lab
from agents.task.planning.rules import RulePlanner


@pytest.mark.parametrize(
    "asked",
    [
        "quick q - if the OD goes from 0.1 to 0.8 in 6 h what's the doubling time?",
        "What concentration is a well at 0.45 on the standard curve?",
        "how much diluent is 1:5 in 200 uL?",
        "if they double every 40 min, how long until OD 1?",
    ],
)
def test_a_question_answered_by_working_out_a_number_asks_for_no_lab_work(asked: str) -> None:
    assert not_lab.asks_number(asked)


@pytest.mark.parametrize(
    "asked",
    [
        "What's the OD600 of plate_1?",  # perhaps a read: left to the families
        "Could you add 50 uL buffer to plate_1 A1 and how long will that take?",
        "Read plate_1 at 600 nm, what's the mean of column 1?",
    ],
)
def test_a_question_with_bench_work_or_a_reading_is_not_only_arithmetic(asked: str) -> None:
    assert not not_lab.asks_number(asked)


@pytest.mark.parametrize(
    "said",
    [
        "FAM read on plate_1: ex 485 nm, em 520 nm.",
        "Calcein on plate_1 please, 494 ex / 517 em",
        "Read fluorescence on plate_1. Excitation 485, emission 520.",
    ],
)
def test_a_read_named_by_its_dye_or_with_its_wavelengths_after_it_is_planned(
    said: str,
) -> None:
    plan = RulePlanner().plan(said, LAB)
    assert plan.kind == "plan"
    reads = [s for s in plan.steps if s.command == "read_fluorescence"]
    assert len(reads) == 1 and reads[0].args["plate"] == "plate_1"


@pytest.mark.parametrize(
    "said",
    [
        "Fit yesterday's initial rates to Michaelis-Menten and send me Km and Vmax.",
        "Average the triplicates from the plate_1 read and give me the CV for each",
    ],
)
def test_analysis_of_data_already_taken_is_refused_as_not_a_lab_request(said: str) -> None:
    out = RulePlanner().plan(said, LAB)
    assert out.kind == "refusal" and out.code == "not_a_lab_request"
