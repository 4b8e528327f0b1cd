"""The benchmark's failure kinds name what went wrong, never a request's text."""

from __future__ import annotations

from evals.verdicts import Verdict, failure_kind


def test_a_confused_outcome_is_named_by_its_kinds_and_what_was_asked() -> None:
    verdict = Verdict(
        "d-x-001",
        False,
        None,
        ["expected plan, got clarification: which secret_dye?"],
        "clarification",
        about="source",
    )
    assert failure_kind("plan", verdict) == ["plan -> clarification [source]"]


def test_each_missed_fact_is_one_kind_and_unknown_ones_are_other() -> None:
    problems = [
        "transfer: 1 channel(s) at once, expected 8",
        "transfer: 12 tips, expected 1",
        "transfer reservoir:A1 -> plate_1:A1: missing 50 uL",
        "end state plate_1:A1 is 0 uL, expected 50",
        "the plan moves 5 uL a -> b, which no action asks for",
        "something new",
    ]
    verdict = Verdict("d-x-001", True, False, problems, "plan")
    assert failure_kind("plan", verdict) == [
        "channels",
        "does more than asked",
        "end state",
        "other fact",
        "tips",
        "volume or wells",
    ]


def test_a_right_answer_has_no_failure_and_no_kind_carries_the_request() -> None:
    assert failure_kind("plan", Verdict("d-x-001", True, True, [], "plan")) == []
    wrong = Verdict(
        "d-x-001", True, False, ["secret_dye: A1 mixed 3x, and no mixing was asked"], "plan"
    )
    assert all("secret_dye" not in k for k in failure_kind("plan", wrong))
