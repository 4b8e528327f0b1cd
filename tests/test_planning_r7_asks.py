"""Numbered steps written "Step 1) ... Step 2. ..." on one line are items; a temperature only
the thermocycler reaches is held there, not refused for the heater-shaker's limit."""

from __future__ import annotations

from agents.task.planning._items import inline_items
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs


def test_steps_numbered_with_the_word_step_are_items_of_one_line() -> None:
    line = "Step 1) add 5 uL to A1. Step 2) add 5 uL to B1. Step 3. shake"
    assert "Step" not in inline_items(line)


def test_a_sentence_that_only_mentions_a_step_keeps_it() -> None:
    line = "transfer 50 uL each step 2 times"
    assert inline_items(line) == line


def test_a_pcr_plate_held_above_the_shakers_limit_goes_to_the_thermocycler() -> None:
    lab = Labs()["thermo"].view
    plan = RulePlanner().plan("Incubate rxn_plate at 95 C for 10 min.", lab)
    assert plan.kind == "plan"
    assert [s.command for s in plan.steps][-1] == "run_profile"


def test_a_deep_well_block_above_the_shakers_limit_is_still_refused() -> None:
    lab = Labs()["deepwell"].view
    refusal = RulePlanner().plan("incubate block_1 at 95 C for 10 min", lab)
    assert refusal.kind == "refusal" and refusal.code == "policy_limit"


def test_wells_said_to_be_left_empty_are_the_ones_not_filled() -> None:
    lab = Labs()["standard"].view
    plan = RulePlanner().plan("Put 50 uL buffer in plate_2, leaving the edge wells empty.", lab)
    assert plan.kind == "plan"
    filled = plan.steps[0].args["destination_wells"]
    assert len(filled) == 60 and "A1" not in filled and "B2" in filled
