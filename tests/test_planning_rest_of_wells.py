"""Wells said relative to others: "the rest of row A", "the other wells", "every other well",
"remove ... and discard", and verb-less pairs after a comma. Each must plan exactly what was
asked (never every well of the set or plate, never a second emptying) or ask which wells."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning import _thinned as thinned
from agents.task.planning._gapping import gaps
from agents.task.planning._outcomes import Ask
from agents.task.planning._quantities import steps
from agents.task.planning._wellsets import find_all
from agents.task.planning.models import Clarification, Plan, PlanStep
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

SAMPLES = Labs()["samples"].view


def _plan(request: str) -> Plan | Clarification:
    result = RulePlanner().plan(request, LAB)
    assert isinstance(result, Plan | Clarification), result
    return result


def _filled(steps: list[PlanStep], plate: str) -> dict[str, set[str]]:
    """Each liquid handler transfer's destination wells on ``plate``, keyed by source well."""
    out: dict[str, set[str]] = {}
    for s in steps:
        if s.command == "transfer" and s.args.get("destination") == plate:
            out.setdefault(str(s.args["source_well"]), set()).update(s.args["destination_wells"])
    return out


_ROW_A = {f"A{c}" for c in range(1, 13)}


@pytest.mark.parametrize(
    "request_",
    [
        "Add 100 uL buffer to plate_1 A1 and 50 uL dye to the other wells of row A.",
        "Add 100 uL buffer to plate_1 A1 and 50 uL dye to all other wells of row A.",
        "Add 100 uL buffer to plate_1 A1 and 50 uL dye to the remaining wells in row A.",
        "Add 100 uL buffer to plate_1 A1, then 50 uL dye to the rest of row A.",
        "Add 100 uL buffer to plate_1 A1; all the other wells of row A get 50 uL dye.",
        "Add 100 uL buffer to plate_1 A1 and 50 uL dye to the remainder of row A.",
    ],
)
def test_the_rest_of_a_set_leaves_out_the_wells_the_clause_before_filled(request_: str) -> None:
    plan = _plan(request_)
    assert isinstance(plan, Plan), plan
    filled = _filled(plan.steps, "plate_1")
    assert filled["A2"] == {"A1"}  # buffer (reservoir A2)
    assert filled["A1"] == _ROW_A - {"A1"}  # dye (reservoir A1): never A1 again


def test_every_remaining_well_is_the_plate_without_what_was_filled() -> None:
    plan = _plan("Add 100 uL buffer to plate_1 column 1 and 50 uL dye to every remaining well.")
    assert isinstance(plan, Plan), plan
    dye = _filled(plan.steps, "plate_1")["A1"]
    assert len(dye) == 88 and not dye & {f"{r}1" for r in "ABCDEFGH"}


@pytest.mark.parametrize(
    "request_",
    [
        "Add 50 uL dye to the rest of row B of plate_1.",  # nothing before it
        "Add 100 uL buffer to plate_1 A1; add 50 uL dye to the other wells of row B.",  # no overlap
    ],
)
def test_the_rest_of_a_set_nothing_filled_asks_which_wells(request_: str) -> None:
    result = _plan(request_)
    assert isinstance(result, Clarification) and result.missing == ["wells"], result


@pytest.mark.parametrize(
    "request_",
    [
        "Fill every other well of plate_1 with 20 uL dye.",
        "Add 20 uL dye to alternate wells across plate_1.",
        "Add 20 uL dye to all of plate_1, every other well.",
        "Add 20 uL dye to the odd wells of plate_1.",
        "Add 20 uL dye to plate_1, every second well.",
        "Add 10 uL dye to plate_2, alternate wells.",
        "Remove 50 uL from every other well of plate_1 and discard.",
        "Replace the buffer in alternate wells of plate_1: remove 80 uL, add 80 uL dye.",
    ],
)
def test_every_other_well_with_no_set_to_thin_asks_never_takes_every_well(request_: str) -> None:
    result = _plan(request_)
    assert isinstance(result, Clarification) and result.missing == ["wells"], result


@pytest.mark.parametrize(
    ("request_", "wells"),
    [
        (
            "Add 60 uL dye to row C of plate_1, every other well.",
            {"C1", "C3", "C5", "C7", "C9", "C11"},
        ),
        ("Alternate wells (row C of plate_1): 60 uL dye", {"C1", "C3", "C5", "C7", "C9", "C11"}),
        (
            "Add 60 uL dye to every other well (row C of plate_1)",
            {"C1", "C3", "C5", "C7", "C9", "C11"},
        ),
        ("Add 60 uL dye to plate_1 row C, even wells", {"C2", "C4", "C6", "C8", "C10", "C12"}),
    ],
)
def test_every_other_well_of_a_set_thins_it(request_: str, wells: set[str]) -> None:
    plan = _plan(request_)
    assert isinstance(plan, Plan), plan
    assert _filled(plan.steps, "plate_1")["A1"] == wells


@pytest.mark.parametrize(
    "said",
    ["every other well", "every second well", "every 2nd well", "every third well",
     "every 4th well", "alternate wells", "alternating wells", "odd wells", "even wells",
     "odd-numbered wells", "odd numbered wells"],
)  # fmt: skip
def test_the_thinning_detector_asks_for_each_way_of_saying_it_when_nothing_is_thinned(
    said: str,
) -> None:
    with pytest.raises(Ask):
        thinned.check(f"add dye to {said}: row A", find_all("add dye to row A"))


def test_the_thinning_detector_is_quiet_when_a_set_is_thinned_or_tips_are_meant() -> None:
    thinned.check("every other well of row A", find_all("every other well of row A"))
    thinned.check("add dye to row A, new tip every other well", find_all("add dye to row A"))


@pytest.mark.parametrize(
    "request_",
    [
        "Remove 50 uL from samples A1-A6 and discard.",
        "Remove 50 uL from samples A1-A6 and discard it.",
        "Aspirate 50 uL from samples A1-A6 and discard to waste.",
        "Take 50 uL out of samples A1-A6 and throw it away",
        "Take 50 uL out of samples A1-A6 and dispose of it.",
    ],
)
def test_remove_and_discard_is_one_removal_never_a_second_emptying(request_: str) -> None:
    result = RulePlanner().plan(request_, SAMPLES)  # samples A1-A6 hold 100 uL each
    assert isinstance(result, Plan), result
    taken = [s for s in result.steps if s.command == "aspirate"]
    assert len(taken) == 6 and all(s.args["volume_ul"] == 50 for s in taken)
    assert len([t for t in result.trace if t.kind == "action"]) == 1


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("add 100 uL dye to plate_1 column 1, buffer to column 2 (100 uL)", 2),
        ("dye into column 1, buffer into every remaining well, 100 uL each", 2),
        ("add 100 uL dye to plate_1 A1, 50 uL buffer to A2, 20 uL dye to A3", 3),
        ("add 50 uL buffer to plate_1 A1, enough to cover the bottom", 1),  # no place after
        ("add 50 uL buffer to plate_1 A1, water to 100 uL", 1),  # a level, not a place
        ("lysate_blk to eluates, well to well, all 96 wells, 100 uL each", 1),  # the pairing
    ],
)
def test_a_liquid_and_its_place_after_a_comma_is_a_pair_of_its_own(text: str, pieces: int) -> None:
    assert len(gaps(text, text)) == pieces


def test_a_verbless_pair_after_a_comma_is_planned_never_folded_into_the_first() -> None:
    plan = _plan("Add 100 uL dye to plate_1 column 1, buffer to column 2 (100 uL)")
    assert isinstance(plan, Plan), plan
    filled = _filled(plan.steps, "plate_1")
    assert filled["A1"] == {f"{r}1" for r in "ABCDEFGH"}  # dye only in column 1
    assert filled["A2"] == {f"{r}2" for r in "ABCDEFGH"}  # buffer in column 2


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("bring dna_plate column 1 to 50 uL with water and column 2 to 70 uL", 2),
        ("top up dna_plate A1-A3 with water to 60 uL, B1-B3 to 80 uL", 2),
        ("top up amp_plate A1 and A3 with low-TE to 50 uL", 1),  # one level for both wells
        ("top up dna_plate column 1 to 60 uL with water and mix", 1),
    ],
)
def test_a_second_wells_and_level_pair_of_a_top_up_is_its_own_top_up(
    text: str, pieces: int
) -> None:
    assert len(gaps(text, text)) == pieces


@pytest.mark.parametrize(
    "request_",
    [
        "Bring dna_plate column 1 to 50 uL with water and column 2 to 70 uL",
        "Top up dna_plate column 1 to 50 uL with water, then column 2 to 70 uL with water.",
    ],
)
def test_each_pair_said_with_one_top_up_verb_is_topped_up_never_dropped(request_: str) -> None:
    result = RulePlanner().plan(request_, SAMPLES)  # column 1 holds 20 uL, column 2 35 uL
    assert isinstance(result, Plan), result
    added: dict[str, float] = {}
    for s in result.steps:
        if s.command == "transfer" and s.args.get("destination") == "dna_plate":
            for w in s.args["destination_wells"]:
                added[w] = added.get(w, 0.0) + float(s.args["volume_ul"])
    assert added.get("A1") == 30 and added.get("H1") == 30
    assert added.get("A2") == 35 and added.get("H2") == 35  # to 70, never 70 more


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("make 5 serial 1:10 dilutions of dye", 5),
        ("4 serial two-fold dilutions", 4),
        ("7 1/2 dilutions", 7),
        ("6 two-fold dilutions", 6),
        ("8 points, 2-fold", 8),
    ],
)
def test_a_count_of_dilutions_is_read_with_serial_and_a_ratio_between(
    text: str, count: int
) -> None:
    assert steps(text) == count


@pytest.mark.parametrize(
    "request_",
    [
        "I need buffer across the top row of plate_1.",
        "I'd like dye in plate_2 A1-A6 please",
        "We would like the dye in plate_2 column 3.",
        "pls get the dye into plate_2 row A",
        "buffer along row C of plate_1",
    ],
)
def test_a_liquid_wished_into_wells_without_a_volume_asks_the_volume(request_: str) -> None:
    result = _plan(request_)
    assert isinstance(result, Clarification) and result.missing == ["volume"], result


@pytest.mark.parametrize(
    ("request_", "final"),
    [
        ("Normalise dna_plate A1-A3 to 10 ng/uL in dest_plate (40 uL each, water). A1=50, A2=40, "
         "A3=20 ng/uL", True),
        ("Normalise to 10 ng/uL, 40 uL: dna_plate A1 (50 ng/uL), A2 (40 ng/uL), A3 (20 ng/uL) -> "
         "dest_plate A1-A3, water as diluent", True),
        ("Normalise dna_plate A1-A3 (50, 40, 20 ng/uL) to 10 ng/uL into dest_plate A1-A3 with "
         "water using 5 uL of each sample", False),  # what is taken, not where it ends
    ],
)  # fmt: skip
def test_a_normalisations_one_volume_is_its_final_volume_unless_taken_of_each(
    request_: str, final: bool
) -> None:
    result = RulePlanner().plan(request_, SAMPLES)
    if not final:
        assert isinstance(result, Clarification) and result.missing == ["volume"], result
        return
    assert isinstance(result, Plan), result
    ends: dict[str, float] = {}
    for s in result.steps:
        if s.command == "transfer" and s.args.get("destination") == "dest_plate":
            wells = s.args["destination_wells"]
        elif s.command == "dispense" and s.args.get("labware") == "dest_plate":
            wells = s.args["wells"]
        else:
            continue
        for w in wells:
            ends[w] = ends.get(w, 0.0) + float(s.args["volume_ul"])
    assert ends == {"A1": 40, "A2": 40, "A3": 40}


@pytest.mark.parametrize(
    ("request_", "volumes"),
    [
        ("Hit-pick (10 uL, new tip each): samples C3 -> dest_plate A1; samples F7 -> dest_plate "
         "A2", [10, 10]),
        ("Hit-pick, 10 uL: samples C3 -> dest_plate A1; samples F7 -> dest_plate A2", [10, 10]),
        ("Cherry-pick (5 uL, one tip per pick): samples C3 -> dest_plate A1; samples F7 -> "
         "dest_plate A2 (20 uL)", [5, 20]),  # a pick that names its own keeps it
    ],
)  # fmt: skip
def test_a_volume_said_in_the_lead_before_the_colon_is_every_picks(
    request_: str, volumes: list[float]
) -> None:
    result = RulePlanner().plan(request_, SAMPLES)
    assert isinstance(result, Plan), result
    assert [s.args["volume_ul"] for s in result.steps if s.command == "transfer"] == volumes
