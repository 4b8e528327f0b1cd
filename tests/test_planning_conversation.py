"""What is said around and instead of an instruction: a read named by its dye with only its
ex/em, its wavelengths in the sentence after it, and questions whose answer is a number worked
out from data (not lab requests). Each rule is also tried against what must not trigger it."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning import _examples as examples
from agents.task.planning import _not_lab as not_lab
from agents.task.planning import _social
from agents.task.planning._clauses import split
from agents.task.planning._joins import has_destination
from agents.task.planning._normalise import normalise
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


@pytest.mark.parametrize(
    "said",
    [
        "Can the robot do that",
        "Is the robot able to handle this",
        "Do you think the robot can handle that",
        "Could the system do this for me",
        "would that work",
    ],
)
def test_asking_whether_the_machine_can_do_it_is_a_pleasantry(said: str) -> None:
    assert _social.is_pleasantry(said)


def test_a_wish_after_what_is_so_is_its_own_clause() -> None:
    texts = [
        c.text
        for c in split(normalise("the cells are already fixed, so basically I just need 100 uL X"))
    ]
    assert len(texts) == 2 and texts[0] == "the cells are already fixed"


def test_a_sentence_spelled_out_by_the_next_is_a_remark() -> None:
    plan = RulePlanner().plan(
        "Can you do the buffer fill for me? That is, 100 uL buffer into every well of plate_1 "
        "row B.",
        LAB,
    )
    assert plan.kind == "plan" and [t.kind for t in plan.trace] == ["fact", "action"]


def test_a_range_of_wells_said_with_to_is_no_destination() -> None:
    assert not has_destination("SERA1 A1 to H1")
    assert has_destination("10 uL from src A1 to dst H1")


def test_a_worked_example_in_brackets_is_lifted_with_its_pairs() -> None:
    text, shown = examples.lift("5 uL each into X column 3 and 4 (A1 goes to A3 and A4, and so on)")
    assert text == "5 uL each into X column 3 and 4" and shown == [("A1", ["A3", "A4"])]


@pytest.mark.parametrize(
    "said", ["add 50 uL (A12 is the blank)", "serial 2-fold (A1 -> B1 -> C1 etc)", "(A1 to A3)"]
)
def test_a_bracket_that_is_no_example_of_pairs_stays(said: str) -> None:
    assert examples.lift(said) == (said, [])


def test_asking_to_be_got_a_read_is_a_read_and_data_sent_is_not_lab_work() -> None:
    plan = RulePlanner().plan("Can you get me a FITC read of plate_1? ex 490, em 525.", LAB)
    assert plan.kind == "plan"
    out = RulePlanner().plan("send me the readings from plate_1", LAB)
    assert out.kind == "refusal" and out.code == "not_a_lab_request"


def test_a_question_about_data_already_taken_is_not_a_lab_request() -> None:
    assert not_lab.asks_number("What's the RFU in plate_1 A1 from this morning?")
    assert not not_lab.asks_number("What's the RFU in plate_1 A1?")


@pytest.mark.parametrize(
    "said",
    [
        "Sorry if this is a dumb question but can you put 100 uL buffer in plate_1 row A?",
        "I know this is a bit odd, but please add 20 uL buffer to plate_1 A1-A6",
        "not sure if this is possible but could you add 30 uL dye to plate_2 B1",
    ],
)
def test_an_excuse_before_but_is_no_claim_about_the_lab(said: str) -> None:
    plan = RulePlanner().plan(said, LAB)
    assert plan.kind == "plan" and [s.command for s in plan.steps] == ["transfer"]


def test_a_note_to_self_is_not_work_for_now() -> None:
    plan = RulePlanner().plan(
        "Note to self: wash plate_1 later. For now just add 200 uL buffer to plate_1 column 1",
        LAB,
    )
    assert plan.kind == "plan" and [s.command for s in plan.steps] == ["transfer"]


def test_what_the_wells_hold_needing_a_liquid_fills_only_those_wells() -> None:
    plan = RulePlanner().plan("the dye in plate_1 row A needs 10 uL buffer each", LAB)
    assert plan.kind != "plan" or all(
        set(s.args["destination_wells"]) <= {f"A{c}" for c in range(1, 13)} for s in plan.steps
    )


def test_a_check_for_enough_liquid_after_a_dash_is_its_own_sentence() -> None:
    plan = RulePlanner().plan(
        "add 10 uL buffer to plate_1 A3-H3 - is there enough buffer in the reservoir for that?",
        LAB,
    )
    assert plan.kind == "plan" and plan.steps[0].args["destination_wells"][0] == "A3"


def test_a_read_named_by_its_mode_takes_the_plate_and_wavelengths_said_next() -> None:
    plan = RulePlanner().plan("Absorbance please! plate_1 at 570 and 600 nm.", LAB)
    assert plan.kind == "plan"
    reads = [s.args.get("wavelength_nm") for s in plan.steps if s.command == "read_absorbance"]
    assert reads == [570, 600]
