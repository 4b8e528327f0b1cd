"""Ratio dilutions told by their parts ("1+100 (10 uL serum + 1000 uL diluent)") and top-ups
of the wells two clauses filled ("..., then bring both up to 250 uL"): the stages that read
them, and what the planner makes of them."""

from __future__ import annotations

import pytest

from agents.task.planning._normalise import normalise
from agents.task.planning._order import run_order
from agents.task.planning._quantities import fold, quantities
from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


@pytest.mark.parametrize(
    ("text", "factor"),
    [("pre-dilution 1+100", 101.0), ("dilute 1 + 9 in PBS", 10.0), ("1+1 with water", 2.0)],
)
def test_one_plus_n_is_one_part_in_n_plus_one(text: str, factor: float) -> None:
    assert fold(text) == (factor, "ratio")


@pytest.mark.parametrize("text", ["add 1 + 9 uL", "A1+9", "1+4 parts"])
def test_a_sum_of_volumes_a_well_or_parts_is_no_plus_ratio(text: str) -> None:
    assert fold(text) is None


def test_the_n_of_a_one_in_n_ratio_is_no_volume_of_a_list() -> None:
    found = quantities("col 2, 1 in 20, 800 uL final")
    assert [q.value for q in found if q.kind == "volume"] == [800.0]


def test_q_dot_s_dot_is_one_word_and_ends_no_sentence() -> None:
    assert "qs to 300 uL" in normalise("then Q.S. to 300 uL with PBS").text


def test_mixing_after_adding_what_the_sentence_adds_is_no_step_of_its_own() -> None:
    said = run_order("10 uL serum + 1000 uL diluent, mix 5x after adding the serum")
    assert "adding" not in said and said.endswith("mix 5x")


def _plan(request: str, lab: str) -> Plan:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan), result
    return result


def _volumes_into(plan: Plan, plate: str) -> dict[str, float]:
    into: dict[str, float] = {}
    for s in plan.steps:
        if s.command == "transfer" and s.args["destination"] == plate:
            for w in s.args["destination_wells"]:
                into[w] = into.get(w, 0.0) + s.args["volume_ul"]
        if s.command == "dispense" and s.args["labware"] == plate:
            for w in s.args["wells"]:
                into[w] = into.get(w, 0.0) + s.args["volume_ul"]
    return into


def test_the_parts_of_a_ratio_dilution_are_the_volumes_that_go_in() -> None:
    plan = _plan(
        "IgE pre-dil: 1+19 (15 uL patient serum + 285 uL IgE diluent), pt_sera A1-D1 to "
        "dil_blk A1-D1",
        "r5r_allergy",
    )
    assert _volumes_into(plan, "dil_blk") == {w: 300.0 for w in ("A1", "B1", "C1", "D1")}


def test_parts_that_are_not_the_ratio_are_asked_about() -> None:
    result = RulePlanner().plan(
        "Pre-dilute the sera 1:10 (30 uL patient serum + 200 uL of PBS 1X), pt_sera A2-D2 -> "
        "dil_blk A2-D2",
        LABS["r5r_allergy"].view,
    )
    assert isinstance(result, Clarification) and result.missing == ["volume"]


@pytest.mark.parametrize("which", ["both", "them"])
def test_topping_up_both_wells_two_clauses_filled_tops_up_each(which: str) -> None:
    plan = _plan(
        "Put 30 uL serum from pt_sera A1 into dil_blk B5 and 45 uL from pt_sera A2 into "
        f"dil_blk B6, then bring {which} to 500 uL with IgE diluent.",
        "r5r_allergy",
    )
    assert _volumes_into(plan, "dil_blk") == {"B5": 500.0, "B6": 500.0}


def test_wells_a_ratio_and_a_final_volume_are_a_dilution_without_the_verb() -> None:
    plan = _plan(
        "subculture: starters col 2 -> subcult col 2, 1 in 20, 800 uL final in YPD broth",
        "r5r_yeast",
    )
    assert _volumes_into(plan, "subcult") == {f"{r}2": 800.0 for r in "ABCDEFGH"}


def test_a_place_after_a_colon_then_into_is_what_is_diluted() -> None:
    plan = _plan(
        "Back-dilute the starters 1:50 into 1 mL of SD-Leu: starters A1-H1 into subcult A1-H1.",
        "r5r_yeast",
    )
    assert _volumes_into(plan, "subcult") == {f"{r}1": 1000.0 for r in "ABCDEFGH"}


def _sources(plan: Plan) -> set[tuple[str, str]]:
    found = set()
    for s in plan.steps:
        if s.command == "transfer":
            found.add((s.args["source"], s.args["source_well"]))
        if s.command == "aspirate":
            found |= {(s.args["labware"], w) for w in s.args["wells"]}
    return found


@pytest.mark.parametrize(
    "request_",
    [
        "Pooled QC: 10 uL from each of the 8 patient sera in column 3 of pt_sera, all into "
        "dil_blk H12",
        "pool 10 uL from each of the eight samples in pt_sera A3-H3 into dil_blk H12",
        "take 10 uL from each of the sera in col 3 of pt_sera and pool them together in "
        "dil_blk H12",
    ],
)
def test_a_count_and_a_noun_after_from_describe_the_wells_taken_from(request_: str) -> None:
    plan = _plan(request_, "r5r_allergy")
    assert _sources(plan) == {("pt_sera", f"{r}3") for r in "ABCDEFGH"}
    assert _volumes_into(plan, "dil_blk") == {"H12": 80.0}


def test_wells_said_before_a_liquid_are_where_that_liquid_is() -> None:
    plan = _plan(
        "dilute the column 1 starter cultures 1:100 into subcult column 1, 1 mL final in YPD broth",
        "r5r_yeast",
    )
    assert ("starters", "A1") in _sources(plan)
    assert _volumes_into(plan, "subcult") == {f"{r}1": 1000.0 for r in "ABCDEFGH"}
