"""Dispensing as kit inserts and protocols say it: a volume per well onto a plate named without
wells, and a protocol step said in the passive."""

from __future__ import annotations

import pytest

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
