"""Safety: a plan never does other than what was asked. A remark never re-maps wells, a number
inside a liquid's name is never an amount, a liquid in two places is asked about, and a count,
a destination or the wells the request never gave are asked for. Each detector is also tried
against the requests it must leave alone."""

from __future__ import annotations

import pytest

from agents.task.planning.models import Clarification, Plan, Refusal
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


def _plan(lab: str, request: str) -> Plan | Clarification | Refusal:
    return RulePlanner().plan(request, LABS[lab].view)


def _wells(said: Plan | Clarification | Refusal) -> list[str]:
    assert isinstance(said, Plan), said
    return [w for s in said.steps for w in s.args.get("destination_wells", [])]


@pytest.mark.parametrize(
    "request_",
    [
        "transfer 20 uL PBS to bca_96 A1-A12 (the bottom row)",
        "transfer 20 uL PBS to bca_96 A1-H1 (ie column 2)",
        "transfer 20 uL PBS to bca_96 A1-H1 (column 2)",
        "transfer 20 uL PBS to bca_96 A1-A12 - the bottom row",
        "transfer 20 uL PBS to bca_96 A1-A12, i.e. row H",
        "transfer 20 uL PBS to bca_96 A1-A12 — that is, row H",
        "transfer 20 uL PBS to bca_96 column 1 (A1-A8)",
    ],
)
def test_wells_restated_as_other_wells_are_asked_about(request_: str) -> None:
    said = _plan("b2_bca", request_)
    assert isinstance(said, Clarification) and said.missing == ["wells"]


@pytest.mark.parametrize(
    "request_",
    [
        "transfer 20 uL PBS to bca_96 I1-I12 (the bottom row)",
        "transfer 20 uL PBS to bca_96 the bottom row (I1-I12)",
        "transfer 20 uL PBS to bca_96 I1-I12, i.e. the last row",
    ],
)
def test_a_restated_well_the_plate_lacks_is_refused(request_: str) -> None:
    said = _plan("b2_bca", request_)
    assert isinstance(said, Refusal) and said.code == "plate_size"


@pytest.mark.parametrize(
    ("request_", "wells"),
    [
        ("transfer 20 uL PBS to bca_96 H1-H12 (the bottom row)", [f"H{c}" for c in range(1, 13)]),
        ("transfer 20 uL PBS to bca_96 A1-H1 (i.e. column 1)", [f"{r}1" for r in "ABCDEFGH"]),
        ("transfer 20 uL PBS to bca_96 A1-A12, i.e. the top row", [f"A{c}" for c in range(1, 13)]),
        ("transfer 20 uL PBS to bca_96 row A (A1-A4)", ["A1", "A2", "A3", "A4"]),
        ("transfer 20 uL PBS to bca_96 A1-A4 (row A)", ["A1", "A2", "A3", "A4"]),
        (
            "transfer 20 uL PBS to bca_96 A1-A2 and the bottom row",
            ["A1", "A2"] + [f"H{c}" for c in range(1, 13)],
        ),
    ],
)
def test_wells_restated_alike_or_narrowed_are_planned(request_: str, wells: list[str]) -> None:
    assert _wells(_plan("b2_bca", request_)) == wells
