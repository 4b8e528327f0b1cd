"""Columns, channels and tips as people say them: layouts said by what they leave out, tip
wishes, copies said as a noun, and replicates laid side by side. Each rule is also tried
against what must not trigger it."""

from __future__ import annotations

import pytest

from agents.task.planning._clauses import split
from agents.task.planning._entities import how_said
from agents.task.planning._lexicon import Lexicon, Mention
from agents.task.planning._normalise import normalise
from agents.task.planning._nouns import copies_said
from agents.task.planning._quadrants import quadrants
from agents.task.planning._wellsets import find_all
from agents.task.planning.models import Clarification, Plan, Refusal
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs


def _wells(text: str) -> list[list[str]]:
    return [ws.expand(8, 12) for ws in find_all(text)]


def _columns(*numbers: int) -> list[str]:
    return [f"{r}{c}" for r in "ABCDEFGH" for c in numbers]


@pytest.mark.parametrize(
    ("text", "columns"),
    [
        ("all but the last column of #", range(1, 12)),
        ("all columns except the last", range(1, 12)),
        ("all columns but the first two", range(3, 13)),
        ("all but the last two columns of #", range(1, 11)),
        ("all columns except 6 and 7 of #", [*range(1, 6), *range(8, 13)]),
        ("all but column 12 of #", range(1, 12)),
    ],
)
def test_a_plate_said_by_the_columns_it_leaves_out_is_the_rest(
    text: str, columns: range | list[int]
) -> None:
    assert _wells(text) == [_columns(*columns)]


def test_rows_said_by_what_they_leave_out_are_the_rest() -> None:
    assert _wells("all rows but H") == [[f"{r}{c}" for r in "ABCDEFG" for c in range(1, 13)]]
    assert _wells("all rows but the bottom one") == _wells("all rows but H")


def test_the_wells_off_the_edges_are_the_inner_sixty() -> None:
    inner = _wells("the inner 60 wells")
    assert len(inner[0]) == 60
    assert _wells("all wells, except the edges") == inner
    assert _wells("every well except the outer ones") == inner


def test_an_exception_not_understood_leaves_no_wells_rather_than_all_of_them() -> None:
    assert _wells("all but the last of #") == []
    assert _wells("all columns except A") == []


@pytest.mark.parametrize(
    ("said", "policy"),
    [
        ("discard tips after each column", "per_column"),
        ("tip changes between columns", "per_column"),
        ("eject the tips between columns", "per_column"),
        ("tips: reuse", "once"),
        ("reusing the tips", "once"),
        ("tip reuse OK", "once"),
        ("keep tips between columns", "once"),
        ("8 tips for the whole thing", "once"),
        ("same tip per source", "per_source"),  # never one tip carried from sample to sample
        ("the same tip for each reagent", "per_source"),
        ("reuse tips within a source", "per_source"),
        ("same tip for everything", "once"),
        ("do not re-use tips", "per_destination"),
        ("change tips between wells", "per_destination"),
        ("add 20 uL to column 1", None),
    ],
)
def test_tip_wishes_said_many_ways_become_one_policy(said: str, policy: str | None) -> None:
    assert how_said(said)[1] == policy


@pytest.mark.parametrize(
    "request_text",
    [
        "Make me a replicate plate of samples on dest_plate",
        "make a replica of samples onto dest_plate",
        "Create a daughter plate from samples in dest_plate",
        "Prepare a copy plate of samples on dest_plate",
    ],
)
def test_a_copy_said_as_a_noun_is_read_as_the_verb(request_text: str) -> None:
    (clause,) = split(normalise(request_text))
    assert clause.text.startswith("replicate samples ")
    assert clause.said == request_text  # the trace shows what was written


def test_making_something_else_is_not_a_copy() -> None:
    (clause,) = split(normalise("make a 2-fold dilution of dye across row A of plate_1"))
    assert clause.text.startswith("make a 2-fold dilution")


def _texts(request: str) -> list[str]:
    return [c.text for c in split(normalise(request))]


@pytest.mark.parametrize(
    ("request_text", "second"),
    [
        (
            "Fill the odd columns of plate_2 with 100 uL dye and the even ones with 100 uL buffer",
            "Fill the even columns with 100 uL buffer",
        ),
        (
            "Fill columns 1-6 of plate_2 with dye and columns 7-12 with buffer",
            "Fill columns 7-12 with buffer",
        ),
        ("add dye to plate_1 and buffer to plate_2", "add buffer to plate_2"),
    ],
)
def test_one_verb_for_two_pairs_is_two_clauses_the_second_borrowing_the_verb(
    request_text: str, second: str
) -> None:
    clauses = split(normalise(request_text))
    assert [c.text for c in clauses][1] == second
    assert clauses[1].said == request_text.split(" and ")[1]  # the trace shows what was written


@pytest.mark.parametrize(
    "request_text",
    [
        "add 50 uL of dye and buffer to A1",
        "transfer 10 uL from samples A1 to dest A1 and samples B1 to dest B1",
        "fill row A with buffer and mix",
        "add 20 uL buffer to A1 and B1 of plate_1",
    ],
)
def test_and_between_parts_of_one_pair_does_not_split(request_text: str) -> None:
    assert len(_texts(request_text)) == 1 or _texts(request_text)[1].startswith("mix")


@pytest.mark.parametrize(
    ("said", "policy"),
    [
        ("change tip every row", "per_row"),
        ("a new tip for each row", "per_row"),
        ("one tip per row", "per_row"),
        ("one tip per well", "per_destination"),
    ],
)
def test_a_tip_for_every_row_is_its_own_policy(said: str, policy: str) -> None:
    assert how_said(said)[1] == policy


def test_a_range_written_with_a_colon_before_a_list_is_a_well_and_the_list() -> None:
    sets = find_all("into # starting at A1: B2, B4, D6")
    assert [s.text for s in sets] == ["A1", "B2, B4, D6"]
    assert [s.text for s in find_all("A1: A12")] == ["A1: A12"]


def _plan(lab: str, request: str) -> Plan | Clarification | Refusal:
    return RulePlanner().plan(request, Labs()[lab].view)


def test_a_new_tip_for_every_row_with_one_channel_takes_one_tip_a_row() -> None:
    plan = _plan("standard", "Add 60 uL buffer to rows A-D of plate_1, a new tip for each row")
    assert isinstance(plan, Plan)
    assert "4 tips" in plan.summary


def test_picks_into_a_run_from_a_starting_well_ask_which_way_the_run_goes() -> None:
    asked = _plan(
        "chan_screen",
        "Cherry-pick B2, B4 and D6 from cmpd_src into daughter starting at A1, 2 uL each",
    )
    assert isinstance(asked, Clarification)
    assert asked.missing == ["wells"]
    planned = _plan(
        "chan_screen",
        "Cherry-pick B2, B4 and D6 from cmpd_src into daughter starting at A1, row-wise, 2 uL each",
    )
    assert isinstance(planned, Plan)
    dispensed = [s.args.get("destination_wells") for s in planned.steps if s.command == "transfer"]
    assert dispensed == [["A1"], ["A2"], ["A3"]]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("stamp X into all four quadrants of Y", [1, 2, 3, 4]),
        ("stamp X into quadrants 1 and 4 of Y", [1, 4]),
        ("stamp X into Q1-Q4 of Y", [1, 2, 3, 4]),
        ("stamp X into quadrant 3 of Y", [3]),
        ("transfer 1 uL from X A1-H10 into Y Q2", [2]),
        ("add 10 uL water to Y Q1", []),  # nothing copied: Q1 is a (missing) well
        ("put 20 uL in well Q1", []),
        ("stamp X into the top-left quadrant of Y", [1]),
        ("copy X into the upper right quadrant of Y", [2]),
        ("X cols 1-3 -> Y bottom-right quadrant, 2 uL", [4]),
        ("copy X into the third quadrant of Y", [3]),
        ("transfer X into quadrant four of Y", [4]),
        ("X -> Y Q3, 1.5 uL/well", [3]),  # the 1 of 1.5 uL is no second quadrant
    ],
)
def test_quadrants_are_read_as_said_and_a_bare_q_only_where_wells_are_copied(
    text: str, named: list[int]
) -> None:
    assert quadrants(text) == named


def test_a_tip_wish_said_for_one_liquid_works_only_that_liquids_transfers() -> None:
    plan = _plan(
        "standard",
        "Add 50 uL buffer to plate_1 A1-A12 and 10 uL dye to plate_1 B1-B12. "
        "One tip for the buffer, a new tip for every dye transfer.",
    )
    assert isinstance(plan, Plan)
    assert "13 tips" in plan.summary
    assert [t.kind for t in plan.trace] == ["action", "action", "setting", "setting"]


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("Do duplicates of samples A1-H1 into dest_plate", "transfer in duplicate samples A1-H1"),
        ("make triplicates of samples A1 in dest_plate A1-A3", "transfer in triplicate samples A1"),
        ("add 50 microlitres of dye to A1", "add 50 uL of dye to A1"),
        ("add 50 uL dye to columns one to three", "add 50 uL dye to columns 1 to 3"),
    ],
)
def test_copies_counts_and_units_said_in_words_are_read_as_the_usual_form(
    said: str, read: str
) -> None:
    assert _texts(said)[0].startswith(read)


def test_a_label_naming_where_picks_go_is_the_plate_of_the_wells_after_the_arrows() -> None:
    plan = _plan(
        "chan_screen", "cherry-pick to daughter: cmpd_src A2 5 uL -> D1; cmpd_src E7 12 uL -> D2"
    )
    assert isinstance(plan, Plan)
    assert {s.args.get("destination") for s in plan.steps if s.command == "transfer"} == {
        "daughter"
    }


@pytest.mark.parametrize(
    "request_text",
    [
        "Dispense 50 uL buffer into 3 wells of plate_1 row C",
        "Add 10 uL dye to two wells of plate_1 column 1",
        "Add 50 uL dye to plate_1 row C in triplicate",
    ],
)
def test_a_count_of_wells_the_named_set_does_not_have_is_asked_never_filled_all_the_same(
    request_text: str,
) -> None:
    asked = _plan("standard", request_text)
    assert isinstance(asked, Clarification)
    assert asked.missing == ["wells"]


@pytest.mark.parametrize(
    "request_text",
    [
        "Add 50 uL dye to each of the 12 wells of plate_1 row A",
        "Add 100 uL buffer to the inner 60 wells of plate_1",
        "Add 50 uL dye to plate_1 A1-A3 in triplicate",
        "Triplicate columns of buffer, 50 uL, in plate_1 columns 1-3, multichannel",
    ],
)
def test_a_count_of_wells_or_replicates_the_set_has_is_planned(request_text: str) -> None:
    assert isinstance(_plan("standard", request_text), Plan)


@pytest.mark.parametrize(
    ("said", "channels"),
    [("using the multi", 8), ("with the P300 multi", 8), ("a multi-step dispense", None)],
)
def test_the_multi_is_the_multichannel(said: str, channels: int | None) -> None:
    assert how_said(said)[0] == channels


def test_all_columns_alone_is_the_whole_plate() -> None:
    assert [len(w) for w in _wells("100 uL per well, all columns, 8-channel")] == [96]


def test_the_empty_plate_is_the_one_plate_that_holds_nothing_and_never_the_source() -> None:
    plan = _plan("samples", "Stamp samples onto the empty plate, 10 uL per well")
    assert isinstance(plan, Plan)
    assert {s.args.get("destination") for s in plan.steps} == {"dest_plate"}
    asked = _plan("samples", "Copy samples to the other plate, 5 uL each")
    assert isinstance(asked, Clarification)
    assert "samples" not in asked.options


def test_a_camel_case_plate_id_is_found_however_it_is_spaced() -> None:
    lex = Lexicon(Labs()["chan_elisa"].view)
    found = [m.name for m in lex.labware_mentions("from plate B to Plate A and PlateA")[0]]
    assert found == ["PlateB", "PlateA", "PlateA"]


def test_a_liquid_word_as_close_to_two_lab_liquids_is_not_sure() -> None:
    lex = Lexicon(Labs()["chan_elisa"].view)
    said = lex.liquid("buffer")
    assert said is not None and not said.sure
    assert lex.liquid("buffer a") == Mention("Buffer A", 0, 0, "buffer a", True)


def test_one_column_of_tips_is_the_eight_channel_head_used_throughout() -> None:
    assert how_said("using one column of tips") == (8, "once")


@pytest.mark.parametrize(
    ("request_text", "kind"),
    [
        ("samples A1 x3 into dest_plate A1-A3, 20 uL", "plan"),  # one copy in each well
        ("3x samples B4 -> dest_plate C1, C2, C3 @ 15 ul", "plan"),
        ("Add 50 uL buffer to dest_plate A1-A3 3 times", "clarification"),  # said again?
        ("samples A1 x3 into dest_plate A1, 20 uL", "clarification"),  # 60 uL, or more wells?
    ],
)
def test_an_x_count_of_wells_into_as_many_times_the_wells_is_replicates(
    request_text: str, kind: str
) -> None:
    assert _plan("samples", request_text).kind == kind


@pytest.mark.parametrize(
    ("said", "copies"),
    [
        ("Make two daughter plates from MP-07 onto DP-07a", 2),
        ("please create 3 replica plates of X", 3),
        ("Make a daughter plate of samples on dest_plate", None),
        ("Make two 1:10 dilutions", None),
    ],
)
def test_a_copy_noun_says_how_many_copies(said: str, copies: int | None) -> None:
    assert copies_said(said) == copies


def test_a_place_in_brackets_after_the_source_is_the_destination_only_on_another_plate() -> None:
    copied = _plan("samples", "samples A1 in triplicate (dest_plate A1, A2, A3), 20uL")
    assert isinstance(copied, Plan)
    assert "dest_plate" in copied.summary
    own = _plan("samples", "Transfer 20 uL from samples (A1-A6) into dest_plate B1-B6")
    assert isinstance(own, Plan)
    assert "samples A1..A6" in own.summary


@pytest.mark.parametrize(
    "request_text",
    [
        "Stamp MP-07 to DP-07a, 5 uL. Use the 8-channel.",
        "Stamp MP-07 to DP-07a, 5 uL. Head: 8-channel.",
        "Stamp MP-07 to DP-07a, 5 uL. 8-channel.",
    ],
)
def test_a_head_said_in_its_own_sentence_after_the_move_works_it(request_text: str) -> None:
    plan = _plan("s6_arp", request_text)
    assert isinstance(plan, Plan)
    assert "8 channels" in plan.summary or "8 channel" in plan.summary
