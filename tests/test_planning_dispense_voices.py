"""Dispensing as kit inserts and protocols say it: a volume per well onto a plate named without
wells, and a protocol step said in the passive."""

from __future__ import annotations

import pytest

from agents.task.planning import _wellsets as ws
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._phrasings import rephrase
from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


def _plan(request: str, lab: str) -> Plan | Clarification:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan | Clarification), result
    return result


def _wells(plan: Plan) -> list[str]:
    return [w for s in plan.steps for w in s.args.get("destination_wells", [])]


@pytest.mark.parametrize(
    ("request_text", "lab", "count"),
    [
        ("50 uL/well stop solution, elisa_plate", "reservoirs", 96),
        ("prime lp384_b with 20 uL DPBS w/o Ca/Mg per well", "x6_dispense", 384),
        ("add 1 mL complete DMEM per well to plate12", "culture_dev", 12),
    ],
)
def test_a_volume_per_well_onto_a_named_plate_fills_every_well(
    request_text: str, lab: str, count: int
) -> None:
    result = _plan(request_text, lab)
    assert isinstance(result, Plan)
    assert len(_wells(result)) == count


@pytest.mark.parametrize(
    ("request_text", "lab"),
    [
        ("add 10 uL HBSS per well to view_96_b3", "r5w_serology"),  # cells in some wells only
        ("add 100 uL RPMI-1640 to maxisorp_1", "x6_dispense"),  # not said per well
        ("add 10 uL per well from samples to dest_plate", "samples"),  # a copy, not a pour
    ],
)
def test_a_plate_without_wells_is_asked_when_every_well_is_not_plainly_meant(
    request_text: str, lab: str
) -> None:
    result = _plan(request_text, lab)
    assert isinstance(result, Clarification)
    assert result.missing == ["wells"]


def test_a_protocols_present_passive_is_its_command_and_the_past_stays_a_fact() -> None:
    assert rephrase("100 uL of TMB is added to all wells of X").startswith("add 100 uL of TMB")
    assert rephrase("2. cells_96 is incubated at 37 C for 4 h") == (
        "2. incubate cells_96 at 37 C for 4 h"
    )
    said = "50 uL of dye was added to plate_1 A1 earlier"
    assert rephrase(said) == said


def test_a_source_said_first_is_the_source_of_the_command_after_it() -> None:
    assert rephrase("From trough A3 of quad_res, add 100 uL to every well of X.") == (
        "add 100 uL to every well of X from trough A3 of quad_res."
    )
    said = "Using the multichannel, add 100 uL to every well of X."
    assert rephrase(said) == said


def test_a_lane_of_a_named_trough_is_no_unknown_plate() -> None:
    lex = Lexicon(LABS["x6_dispense"].view)
    for text in ("from res_12 trough 2 to X", "from trough 2 of res_12 to X"):
        found, unknown = lex.labware_mentions(text)
        assert [m.name for m in found] == ["res_12"]
        assert unknown == []
    assert [m.written for m in lex.labware_mentions("from trough 2 to X")[1]] == ["trough 2"]


@pytest.mark.parametrize(
    "request_text",
    [
        "We're using maxisorp_1 today. Add 200 uL 1% casein block to each well.",
        "Step 3. Add 100 uL of TMB-Ultra to each well. Plate: maxisorp_1.",
        "Add 100 uL of TMB-Ultra to each well, then read maxisorp_1 at 650 nm",
    ],
)
def test_the_one_plate_a_request_names_elsewhere_is_where_each_well_is(request_text: str) -> None:
    result = _plan(request_text, "x6_dispense")
    assert isinstance(result, Plan)
    assert result.steps[0].args["destination"] == "maxisorp_1"
    assert len(result.steps[0].args["destination_wells"]) == 96


def test_each_well_of_the_other_plate_is_never_the_plate_just_worked_on() -> None:
    result = _plan(
        "Add 100 uL PBS to plate_2 A1. Then add 100 uL TMB to each well of the other plate.",
        "reservoirs",
    )
    assert isinstance(result, Plan)
    last = [s for s in result.steps if s.command == "transfer"][-1]
    assert last.args["destination"] == "elisa_plate"
    assert len(last.args["destination_wells"]) == 96


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("all wells, column 12 left empty", 88),
        ("every well (wells H11 and H12 left out)", 94),
        ("rows A-H (row H excluded)", 84),
        ("A1-A12 (A12 left out)", 11),
    ],
)
def test_wells_said_after_a_set_to_be_left_out_are_taken_out_of_it(text: str, count: int) -> None:
    sets = ws.find_all(text)
    assert len(sets) == 1
    assert len(sets[0].expand(8, 12)) == count


@pytest.mark.parametrize(
    ("request_text", "first", "count"),
    [
        ("add 150 uL YPD to the culture wells of od_plate", "A1", 48),
        ("add 100 uL YPD to each well containing culture in od_plate", "A1", 48),
        ("Add 50 uL sterile water to od_plate (culture wells only)", "A1", 48),
        ("add 100 uL YPD to the empty wells of od_plate", "A7", 48),
        ("add 50 uL YPD to the empty wells of od_plate row A", "A7", 6),
    ],
)
def test_wells_named_by_what_they_hold_or_by_holding_nothing(
    request_text: str, first: str, count: int
) -> None:
    result = _plan(request_text, "x6_media")
    assert isinstance(result, Plan)
    wells = _wells(result)
    assert (wells[0], len(wells)) == (first, count)
