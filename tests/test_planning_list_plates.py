"""Per-well lists whose plates are named once: the stages that read them (r5l)."""

from __future__ import annotations

from agents.task.planning._clauses import split
from agents.task.planning._list_heads import opens_a_list, to_pairs
from agents.task.planning._markdown import unwrapped
from agents.task.planning._normalise import normalise
from agents.task.planning._wellsets import find_all
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

NAMES = frozenset({"mp07", "conf384", "dil_96"})


def test_a_line_naming_two_plates_heads_the_pairs_under_it_without_a_colon() -> None:
    assert opens_a_list("strain picks mp07 -> conf384", ["A1 -> D5 15 uL"], NAMES)
    assert opens_a_list("hits from mp07 into dil_96 (30 uL each)", ["1. D4 to A1"], NAMES)


def test_a_line_with_its_own_wells_or_volume_heads_nothing() -> None:
    assert not opens_a_list("move 20 uL mp07 A1 -> conf384 B1", ["A2 -> B2 5 uL"], NAMES)
    assert not opens_a_list("add 20 uL buffer to conf384", ["A2 -> B2 5 uL"], NAMES)
    assert not opens_a_list("shake the plate", ["A2 -> B2 5 uL"], NAMES)


def test_pair_items_under_a_colonless_heading_take_its_plates_as_their_label() -> None:
    clauses = split(normalise("picks mp07 -> conf384\nB3 -> A1 5 uL\nE7 -> A2 5 uL"), NAMES)
    assert clauses[0].heading
    assert [c.label for c in clauses[1:]] == ["picks mp07 -> conf384"] * 2


def test_a_bare_adjective_before_a_word_is_not_the_whole_plate() -> None:
    assert not find_all("Hits for full kinetics")
    assert not find_all("Whole-cell actives")
    assert [w.text for w in find_all("fill the whole plate")] == ["the whole plate"]


def test_volumes_listed_with_the_unit_once_at_the_end_each_get_it() -> None:
    text = normalise("assay buffer H1 70 / H2 55 / H3 40 uL").text
    assert text == "assay buffer H1 70 uL / H2 55 uL / H3 40 uL"


def test_a_line_broken_after_a_preposition_joins_the_next() -> None:
    assert unwrapped("First the product from\npcr_cleanup, then water") == (
        "First the product from pcr_cleanup, then water"
    )
    assert unwrapped("Add water to\n- A1\n- A2") == "Add water to\n- A1\n- A2"


def test_a_pair_after_a_volume_is_not_joined_to_the_well_before_it() -> None:
    sets = find_all("lysate # A1 ##### -> H1, A2 ##### -> H2")
    assert [s.text for s in sets] == ["A1", "H1", "A2", "H2"]


def test_a_list_of_well_to_well_that_runs_backwards_is_picks_not_ranges() -> None:
    assert to_pairs("from mp07 - A3 to A1, B7 to A2") == "from mp07 - A3 -> A1, B7 -> A2"
    assert to_pairs("A1 to A2, A2 to A3") == "A1 -> A2, A2 -> A3"  # ranges would overlap


def test_a_list_of_forward_ranges_stays_ranges() -> None:
    assert to_pairs("add 50 uL to A1 to A6, B1 to B6") == "add 50 uL to A1 to A6, B1 to B6"


LABS = Labs()


def _moves(lab: str, request: str) -> list[tuple[str, str, str, str, float]]:
    """(source, well, destination, well, uL) of each transfer the plan makes."""
    plan = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(plan, Plan), plan
    return [
        (a["source"], a["source_well"], a["destination"], d, a["volume_ul"])
        for s in plan.steps
        if s.command == "transfer"
        for a in [s.args]
        for d in a["destination_wells"]
    ]


def test_picks_written_well_to_well_backwards_go_from_the_source_plate() -> None:
    request = "hit picking into conf384, 5 uL each, from mp07 - A3 to A1, B7 to A2"
    assert _moves("r5l_hitpick", request) == [
        ("mp07", "A3", "conf384", "A1", 5.0),
        ("mp07", "B7", "conf384", "A2", 5.0),
    ]


def test_the_receiving_plate_said_first_still_receives() -> None:
    request = "Into dil_96, out of mp07 (25 uL per pick): C3->A1, F8->B1"
    assert _moves("r5l_hitpick", request) == [
        ("mp07", "C3", "dil_96", "A1", 25.0),
        ("mp07", "F8", "dil_96", "B1", 25.0),
    ]


def test_loose_source_wells_come_from_the_one_plate_holding_liquid_there() -> None:
    request = "into conf384, 5 uL each: A3 -> A1, B7 -> A2"
    assert [m[0] for m in _moves("r5l_hitpick", request)] == ["mp07", "mp07"]
    request = "Move 20 uL from mp07 B2 to dil_96 A1. Next move 30 uL from C5 to A2."
    assert [m[:2] for m in _moves("r5l_hitpick", request)] == [("mp07", "B2"), ("mp07", "C5")]


def test_the_plates_of_the_first_pick_serve_the_picks_after_it() -> None:
    request = "5 uL from mp07 A1 into conf384 B1, 8 uL from C3 into B2, 10 uL from D4 into B3"
    assert _moves("r5l_hitpick", request)[1:] == [
        ("mp07", "C3", "conf384", "B2", 8.0),
        ("mp07", "D4", "conf384", "B3", 10.0),
    ]
    request = "Take 20 uL of EXP-03 B2 into SEC_load A1, then 30 uL of C5 into A2"
    assert _moves("r5l_protein", request)[1] == ("EXP-03", "C5", "SEC_load", "A2", 30.0)


def test_wells_before_into_the_same_wells_are_the_source_not_the_destination() -> None:
    request = "Add 15 uL TE to norm_plate A1-A3, then libs_in A1-A3 into the same wells, 5 uL each"
    assert _moves("libprep_dev", request)[-3:] == [
        ("libs_in", w, "norm_plate", w, 5.0) for w in ("A1", "A2", "A3")
    ]


def test_the_same_wells_after_a_list_of_items_are_every_well_of_the_list() -> None:
    request = (
        "TE into norm_plate - A1 15 uL; A2 12.5 uL; A3 10 uL - then libs_in A1-A3 into the "
        "same wells, 5, 7.5 and 10 uL"
    )
    assert _moves("libprep_dev", request)[-3:] == [
        ("libs_in", "A1", "norm_plate", "A1", 5.0),
        ("libs_in", "A2", "norm_plate", "A2", 7.5),
        ("libs_in", "A3", "norm_plate", "A3", 10.0),
    ]


def test_a_forward_run_under_a_heading_that_is_no_pick_list_stays_a_range() -> None:
    request = "Transfer into dest_plate:\n- samples A1 to A6, 20 uL\n- samples B1 to B6, 20 uL"
    assert not isinstance(RulePlanner().plan(request, LABS["samples"].view), Plan)
