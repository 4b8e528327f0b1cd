"""How runs are told: titles and remarks that ask for nothing, work told as a story, moves said
as "over to ...". Each rule is also tried against what must not trigger it."""

from __future__ import annotations

import pytest

from agents.task.planning._narrative import narrative
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

_LABS = Labs()


def _plan(lab: str, request: str) -> object:
    return RulePlanner().plan(request, _LABS[lab].view)


def _kinds(result: object) -> list[str]:
    assert isinstance(result, Plan)
    return [t.kind for t in result.trace]


@pytest.mark.parametrize(
    "request_text",
    [
        "qPCR run\n1) 10 uL 2x SYBR master mix into PCR1 A1-A4\n2) move PCR1 onto the atc block",
        "SYBR check (run 4)\n- 10 uL 2x SYBR master mix into PCR1 A1-A4",
        "RT-qPCR - GAPDH vs ACTB, 06/12\n10 uL 2x SYBR master mix into PCR1 A1-A4",
    ],
)
def test_a_first_line_that_names_no_action_is_a_title(request_text: str) -> None:
    kinds = _kinds(_plan("b1_qpcr", request_text))
    assert kinds[0] == "fact" and "action" in kinds[1:]


@pytest.mark.parametrize(
    "request_text",
    [
        "I'm new to the robot so bear with me. 10 uL 2x SYBR master mix into PCR1 A1-A4",
        "ok we're done with PCR1 for now, can you park it in hotel:1",
        "This step sets up the SYBR wells in PCR1. 10 uL 2x SYBR master mix into A1-A4.",
    ],
)
def test_a_remark_said_in_passing_is_noted_and_the_work_planned(request_text: str) -> None:
    kinds = _kinds(_plan("b1_qpcr", request_text))
    assert kinds[0] == "fact" and kinds[-1] == "action"


@pytest.mark.parametrize(
    ("request_text", "code"),
    [
        ("add 10 uL 2x SYBR master mix to PCR1 A1. The plate needs sealing afterwards.", "refusal"),
        ("add 10 uL 2x SYBR master mix to PCR1 A1. The plate then gets vortexed.", "clarification"),
        ("Vortex PCR1\n1) add 10 uL 2x SYBR master mix to PCR1 A1", "refusal"),
        ("qPCR run", "refusal"),  # a title over nothing is no request
    ],
)
def test_a_line_that_may_ask_for_work_is_never_dropped_as_a_remark(
    request_text: str, code: str
) -> None:
    assert _plan("b1_qpcr", request_text).kind == code


@pytest.mark.parametrize(
    ("told", "commands"),
    [
        (
            "The robot first removes 1 mL from each well and adds 500 uL of PFA to each.",
            "first remove 1 mL from each well and add 500 uL of PFA to each.",
        ),
        (
            "the plate then sits for 15 min",
            "then incubate the plate at room temperature for 15 min",
        ),
        ("the plate sits 30 min at 37 C", "incubate the plate for 30 min at 37 C"),
        ("shake it, before the arm parks it in hotel 2", "shake it, then park it in hotel 2"),
        ("We add 50 uL of buffer to A1.", "add 50 uL of buffer to A1."),
    ],
)
def test_work_told_as_a_story_is_written_as_commands(told: str, commands: str) -> None:
    assert narrative(told) == commands


@pytest.mark.parametrize(
    "said",
    [
        "I read the plate yesterday",
        "We read plate_1 yesterday and it looked fine",
        "The reads look noisy",
        "we have 12 mL of buffer in A1",
    ],
)
def test_what_was_done_or_is_so_is_not_rewritten_as_a_command(said: str) -> None:
    assert narrative(said) == said


@pytest.mark.parametrize(
    "request_text",
    [
        "move cells384 onto the bioshake and then over to the reader drawer",
        "put cells384 on the shaker, then across to the reader's drawer",
        "move cells384 to the reader and then over to bioshake3000",
    ],
)
def test_a_place_said_after_a_move_moves_the_plate_on(request_text: str) -> None:
    result = _plan("b2_cmpd", request_text)
    assert isinstance(result, Plan)
    assert [t.kind for t in result.trace] == ["action", "action"]


def test_a_tip_wish_for_one_liquid_named_by_a_word_of_its_name_is_that_liquid_s_alone() -> None:
    result = _plan(
        "b2_micro",
        "100 uL of CAMHB into MIC_P2 H1-H12, then 10 uL of the S. aureus inoculum into H1-H11. "
        "I don't care about tips for the broth but please use a new tip for each inoculum well.",
    )
    assert isinstance(result, Plan)
    transfers = [s for s in result.steps if s.command == "transfer"]
    broth = [s for s in transfers if s.args["source_well"] == "A1"]
    assert len(broth) == 1  # the broth: one tip for its twelve wells
    assert len(transfers) > 1
