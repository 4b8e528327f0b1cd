"""How people talk to the rule planner: social words around a request, and instruments the lab
does not have. Each rule is also tried against what must not trigger it."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning import _social
from agents.task.planning._clauses import split
from agents.task.planning._normalise import normalise
from agents.task.planning.models import Clarification, Plan, Refusal
from agents.task.planning.rules import RulePlanner


def _texts(request: str) -> list[str]:
    return [c.text for c in split(normalise(request))]


@pytest.mark.parametrize(
    "said",
    [
        "Hope you're well",
        "hello, hope your day is going well",
        "Thanks so much, really appreciate it",
        "Many thanks, Sam",
        "best, Kim",
        "Regards",
        "That would be amazing",
        "You're a star",
        "Sorry to bother you again",
        "no worries if not",
        "Thanks a bunch",
        "Just go ahead",
    ],
)
def test_a_clause_of_social_words_only_is_a_pleasantry(said: str) -> None:
    assert _social.is_pleasantry(said)


@pytest.mark.parametrize(
    "said",
    [
        "thanks, add 20 uL dye to A1",
        "hope you can read plate_1",
        "Thanks, Read",
        "Cheers - Mix",
        "sorry, shake it for 2 min",
        "great, then mix A1 3 times",
        "incubate for 1 day",
        "no rush, 50 uL buffer into A1",
        "please hold",
    ],
)
def test_a_clause_that_asks_for_something_is_never_a_pleasantry(said: str) -> None:
    assert not _social.is_pleasantry(said)


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        (
            "Would it be possible to read plate_1 at 450 nm when you get a moment?",
            ["read plate_1 at 450 nm"],
        ),
        (
            "So basically what I need is 40 uL of buffer in column 1 of plate_1, if that's ok.",
            ["40 uL of buffer in column 1 of plate_1"],
        ),
        ("add 20 uL of dye to A1 for me please", ["add 20 uL of dye to A1"]),
        ("incubate plate_1 at 37 C for 1 day", ["incubate plate_1 at 37 C for 1 day"]),
        ("shake until done", ["shake until done"]),
    ],
)
def test_polite_openings_and_trailing_hedges_come_off_a_clause(
    request_text: str, expected: list[str]
) -> None:
    assert _texts(request_text) == expected


@pytest.mark.parametrize(
    "request_text",
    [
        "Hi! Hope you're well. Could you please add 20 uL dye to plate_1 A1 to A4? Thanks!",
        "Good morning team! I need you to add 25 uL of dye to A1-A3 of plate_1. Many thanks, Sam",
        "Kindly dispense 75 uL of buffer into plate_2 A1 through A12. Regards.",
    ],
)
def test_a_chatty_request_is_planned_with_its_pleasantries_in_the_trace(request_text: str) -> None:
    plan = RulePlanner().plan(request_text, LAB)
    assert isinstance(plan, Plan)
    assert [t.kind for t in plan.trace].count("action") == 1
    assert {t.kind for t in plan.trace} <= {"action", "pleasantry"}


def test_a_request_of_pleasantries_only_is_not_a_lab_request() -> None:
    out = RulePlanner().plan("Hi there! Hope you're well. Thanks so much!", LAB)
    assert isinstance(out, Refusal) and out.code == "not_a_lab_request"


@pytest.mark.parametrize(
    "request_text",
    [
        "incubate plate_1 in the incubator at 37 C for 30 minutes at 300 rpm",
        "put plate_1 in the incubator at 37 C for 2 hours",
        "add 50 uL buffer to plate_1 A1, then incubate it in the CO2 incubator at 37 C for 1 h",
        "spin plate_1 down in the centrifuge, then read it at 450 nm",
        "seal plate_1 with the plate sealer",
    ],
)
def test_an_instrument_the_lab_lacks_is_refused_never_replaced(request_text: str) -> None:
    out = RulePlanner().plan(request_text, LAB)
    assert isinstance(out, Refusal) and out.code == "missing_instrument"
    assert "hs1" in out.reason  # names what the lab has


@pytest.mark.parametrize(
    "request_text",
    [
        "incubate plate_1 at 37 C for 30 min",
        "shake plate_1 on the shaker instead of the incubator at 37 C for 10 min at 300 rpm",
        "incubate plate_1 on hs1 at 37 C for 30 min",
    ],
)
def test_the_lab_own_instruments_are_still_used(request_text: str) -> None:
    out = RulePlanner().plan(request_text, LAB)
    assert isinstance(out, Plan | Clarification)
    assert isinstance(out, Plan), out
    assert {s.instrument for s in out.steps} >= {"hs1"}
