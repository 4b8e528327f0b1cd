"""A source said beside its transfer (a lead, a first half, an afterthought) is the transfer's
source, and a container said by its role is the one that holds the liquid named with it."""

from __future__ import annotations

import pytest

from agents.task.planning._labware_names import role_holder
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


def _sources(request: str, lab: str) -> set[tuple[str, str]]:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert result.kind == "plan", result
    return {
        (s.args["source"], s.args["source_well"]) for s in result.steps if s.command == "transfer"
    }


@pytest.mark.parametrize(
    ("request_text", "lab", "source"),
    [
        ("Using the dye, add 20 uL to plate_1 B1:B12.", "standard", ("reservoir", "A1")),
        (
            "Take buffer from reservoir column 2 and add 100 uL to plate_2 row A",
            "standard",
            ("reservoir", "A2"),
        ),
        (
            "dispense 50 uL into plate_1 A1:H1; source is the buffer",
            "standard",
            ("reservoir", "A2"),
        ),
        ("Using the TMB in rgt, put 100 uL into elisa96 A1:H6.", "r8r_immuno", ("rgt", "A1")),
        ("Add 50 uL TMB from the reservoir to elisa96 row B", "r8r_immuno", ("rgt", "A1")),
        (
            "Fill elisa96 row A with 100 uL each, from the capture Ab trough.",
            "r8r_immuno",
            ("quad", "A1"),
        ),
    ],
)
def test_the_source_said_beside_the_transfer_is_its_source(
    request_text: str, lab: str, source: tuple[str, str]
) -> None:
    assert _sources(request_text, lab) == {source}


def test_a_role_word_keeps_its_labware_when_that_holds_the_liquid_and_asks_when_several_do() -> (
    None
):
    view = LABS["r8r_immuno"].view
    plates = [lw for lw in view.labware.values() if lw.kind == "plate"]
    assert role_holder("bigtrough", plates, ["TMB"]) == "rgt"
    assert role_holder("bigtrough", plates, ["PBS-T"]) == "bigtrough"
    assert role_holder("bigtrough", plates, []) == "bigtrough"
    reservoirs = LABS["reservoirs"].view
    both = [lw for lw in reservoirs.labware.values() if lw.kind == "plate"]
    assert role_holder("elisa_plate", both, ["buffer"]) is None  # buffer sits in two troughs


def test_a_move_after_a_well_to_well_transfer_asks_rather_than_carry_an_older_liquid() -> None:
    result = RulePlanner().plan(
        "Add 50 uL dye to plate_1 A1. Transfer 20 uL from plate_1 A1 to plate_1 B1, then 10 uL "
        "into plate_1 C1.",
        LABS["standard"].view,
    )
    assert result.kind == "clarification"


def test_pooling_the_plural_of_a_liquid_takes_every_well_holding_it() -> None:
    result = RulePlanner().plan(
        "Pool the indexed libraries, 3 uL each, into pooldw A6", LABS["r8r_seq"].view
    )
    assert result.kind == "plan"
    taken = {s.args["source_well"] for s in result.steps if s.command == "transfer"}
    assert len(taken) == 32


def test_a_trough_said_to_use_is_the_source_and_the_reservoir_alone_on_three_troughs_is_asked() -> (
    None
):
    used = "Assay diluent → blk384 rows A–D, 20 uL each (use the 12-channel reservoir)"
    assert _sources(used, "r8r_immuno") == {("rgt", "A3")}
    result = RulePlanner().plan(
        "Add 100 uL to every well of elisa96 from the reservoir.", LABS["r8r_immuno"].view
    )
    assert result.kind == "clarification"
