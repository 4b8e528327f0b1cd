"""The planner's stages for multichannel work, tip use, picking lists, pooling and spotting:
tables of pairs, column lists, tiled pairings, and settings said after the work."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB, plan

from agents.task.planning._normalise import normalise
from agents.task.planning._tables import rewrite
from agents.task.planning._wellsets import find_all
from agents.task.planning.families._pairing import pair
from agents.task.planning.models import Plan
from evals.planning import CORPUS, Labs


# --------------------------------------------------------------------------- tables of pairs
def test_a_header_in_parentheses_turns_comma_rows_into_pairs_under_the_heading() -> None:
    text = "Cherry-pick from src to dst (source, destination, volume):\nA1, B1, 10\nC4, B2, 2.5"
    assert rewrite(text) == "Cherry-pick from src to dst:\n- A1 -> B1 10 uL\n- C4 -> B2 2.5 uL"


def test_a_tab_separated_table_with_its_own_header_line_becomes_one_pair_a_row() -> None:
    text = "source well\tdest well\tvolume (mL)\nsrc A2\tdst C1\t0.1\nsrc B4\tdst C2\t0.2"
    assert rewrite(text) == "- src A2 -> dst C1 0.1 mL\n- src B4 -> dst C2 0.2 mL"


def test_a_markdown_table_with_plate_columns_names_each_row_s_plates() -> None:
    text = (
        "| source plate | source well | dest plate | dest well | uL |\n|---|---|---|---|---|\n"
        "| p1 | A1 | p2 | H1 | 5 |\n| p1 | A2 | p2 | H2 | 6 |\nthen read p2"
    )
    assert rewrite(text) == "- p1 A1 -> p2 H1 5 uL\n- p1 A2 -> p2 H2 6 uL\nthen read p2"


@pytest.mark.parametrize(
    "text",
    [
        "transfer from plate_1, to plate_2\nA1, B1",  # a sentence with commas, not a header
        "source, destination, volume\nsee the attached sheet",  # a header without rows
        "source, destination\nA1, B1, 10",  # a row that does not fit its header
    ],
)
def test_text_that_only_looks_like_a_table_is_left_as_written(text: str) -> None:
    assert rewrite(text) == text


def test_tables_are_rewritten_before_tabs_become_spaces() -> None:
    norm = normalise("source\tdestination\tvolume (µL)\nplate_1 A1\tplate_2 B1\t20")
    assert norm.text == "- plate_1 A1 -> plate_2 B1 20 uL"


# --------------------------------------------------------------------------- well sets
def test_a_list_of_columns_with_an_oxford_comma_keeps_its_last_column() -> None:
    (found,) = find_all("columns 1, 2, and 3")
    assert found.expand(8, 12)[-1] == "H3" and len(found.expand(8, 12)) == 24
    (rows,) = find_all("rows A, C, and E")
    assert {w[0] for w in rows.expand(8, 12)} == {"A", "C", "E"}


# --------------------------------------------------------------------------- pairing
def _column(col: int) -> list[str]:
    return [f"{r}{col}" for r in "ABCDEFGH"]


def test_a_column_spotted_into_a_block_of_columns_pairs_row_by_row() -> None:
    block = [f"{r}{c}" for r in "ABCDEFGH" for c in range(1, 5)]  # A1..H4, row by row
    pairs = pair(_column(1), block)
    assert all(s[0] == d[0] for s, d in pairs) and len(pairs) == 32


def test_columns_pooled_into_one_column_pool_each_row_into_its_own_well() -> None:
    src = [w for c in range(1, 5) for w in _column(c)]
    pairs = pair(src, _column(12))
    assert sorted(pairs) == sorted((f"{r}{c}", f"{r}12") for r in "ABCDEFGH" for c in range(1, 5))


# --------------------------------------------------------------------------- settings said last
def test_a_channel_or_tip_setting_said_after_the_work_applies_to_the_work_before_it() -> None:
    result = plan("Add 50 uL buffer to columns 1-3 of plate_1. Use the multichannel.", LAB)
    assert isinstance(result, Plan), result
    dispenses = [s for s in result.steps if s.command == "dispense"]
    assert len(dispenses) == 3 and all(s.args["channels"] == list(range(8)) for s in dispenses)
    result = plan("Add 50 uL buffer to plate_1 A1-A6; fresh tip for each one", LAB)
    assert isinstance(result, Plan) and result.tip_policy.startswith("a fresh tip")
    result = plan("Add 50 uL buffer to plate_1 A1-A6; one tip for the whole thing", LAB)
    assert isinstance(result, Plan) and result.tip_policy == "one tip for everything"


# --------------------------------------------------------------------------- notation
def test_a_labware_and_its_well_written_with_a_colon_and_slashed_lists_are_read() -> None:
    assert normalise("10 uL samples:A3 -> dest:B1, A1:A12 stays").text == (
        "10 uL samples A3 -> dest B1, A1:A12 stays"
    )
    assert normalise("Add 5/10/15 uL to A1/A2/A3").text == "Add 5, 10 and 15 uL to A1, A2 and A3"


def test_a_range_of_sources_before_into_is_a_range_not_a_source_and_a_destination() -> None:
    (found,) = find_all("from # D1 to D6 into # D12")[:1]
    assert found.expand(8, 12) == [f"D{c}" for c in range(1, 7)]
    assert [w.text for w in find_all("from A1 to B1")] == ["A1", "B1"]


def test_a_well_list_before_into_stays_one_list_unless_other_pairs_are_written() -> None:
    assert [w.text for w in find_all("# B2, C5, D9 into # E1, E2")] == ["B2, C5, D9", "E1, E2"]
    assert [w.text for w in find_all("A1 into # A1-A3, A2 into # B1-B3")] == [
        "A1",
        "A1-A3",
        "A2",
        "B1-B3",
    ]


# --------------------------------------------------------------------------- whole plans
def _pairs(result: object) -> list[tuple[str, str, float]]:
    assert isinstance(result, Plan), result
    out = []
    for s in result.steps:
        if s.command == "transfer":
            for d in s.args["destination_wells"]:
                out.append((s.args["source_well"], d, s.args["volume_ul"]))
    return out


def test_volumes_written_before_each_pair_belong_to_that_pair() -> None:
    samples = Labs(CORPUS)["samples"].view  # samples: 100 uL in every well
    result = plan(
        "Move 10 uL samples:A3 -> dest_plate:B1 and 20 uL samples:C6 -> dest_plate:B2", samples
    )
    assert _pairs(result) == [("A3", "B1", 10.0), ("C6", "B2", 20.0)]


def test_a_tip_wish_that_ends_a_sentence_and_a_label_say_how_for_every_move() -> None:
    result = plan(
        "Multichannel: 50 uL dye to plate_1 columns 1-2, then 50 uL buffer to plate_1 "
        "columns 1-2, fresh tips for each column",
        LAB,
    )
    assert isinstance(result, Plan), result
    picks = [s for s in result.steps if s.command == "pick_up_tips"]
    assert len(picks) == 4 and all(p.args["channels"] == list(range(8)) for p in picks)


def test_changing_tips_after_every_well_names_no_wells() -> None:
    result = plan("Put 20 uL of buffer into plate_2 A1 through A8, changing tips after every well")
    assert sorted(d for _, d, _ in _pairs(result)) == sorted(f"A{c}" for c in range(1, 9))


def test_two_plates_joined_by_and_share_the_wells_written_after_them() -> None:
    result = plan("Add 100 uL buffer to plate_1 and plate_2 columns 1-2 with the multichannel")
    assert isinstance(result, Plan), result
    wells = {(s.args["labware"], w) for s in result.steps if s.command == "dispense"
             for w in s.args["wells"]}  # fmt: skip
    assert wells == {(lw, f"{r}{c}") for lw in ("plate_1", "plate_2") for r in "ABCDEFGH"
                     for c in (1, 2)}  # fmt: skip


def test_stamping_from_a_plate_that_holds_nothing_is_refused_with_its_reason() -> None:
    result = plan("Stamp plate_1 onto plate_2, 10 uL per well", LAB)
    assert getattr(result, "code", None) == "insufficient_liquid"


@pytest.mark.parametrize(
    ("text", "count", "first", "last"),
    [
        ("all wells of # except column 12", 88, "A1", "H11"),
        ("row A but not A1", 11, "A2", "A12"),
        ("A1-A12, skipping A6", 11, "A1", "A12"),
        ("the whole plate apart from the outer wells", 60, "B2", "G11"),
        ("columns 1, 3, 5, ..., 11", 48, "A1", "H11"),
        ("cols 2, 4 ... 12", 48, "A2", "H12"),
        ("every third column", 32, "A1", "H10"),
        ("alternating wells of row B", 6, "B1", "B11"),
        ("A1-12", 12, "A1", "A12"),
        ("row A, wells 1-6", 6, "A1", "A6"),
        ("wells 1-12 of row B", 12, "B1", "B12"),
        ("A through D of column 3", 4, "A3", "D3"),
        ("column 3, A-D", 4, "A3", "D3"),
    ],
)
def test_exclusions_progressions_and_steps_select_the_wells_meant(
    text: str, count: int, first: str, last: str
) -> None:
    (found,) = find_all(text)
    wells = found.expand(8, 12)
    assert (len(wells), wells[0], wells[-1]) == (count, first, last)


def test_a_head_the_liquid_handler_lacks_is_refused_never_replaced_by_one_channel() -> None:
    for said in ("with the 12-channel pipette", "using 16 channels"):
        result = plan(f"Add 50 uL buffer to plate_1 row A {said}", LAB)
        assert getattr(result, "code", None) == "missing_instrument", result


def test_new_tips_every_column_of_a_384_plate_is_one_set_for_both_passes_of_a_column() -> None:
    from agents.task.planning._eight import _Batch, groups_8

    odd = _Batch(
        "res", "p384", list(range(8)), ["A1"] * 8, [f"{r}1" for r in "ACEGIKMO"], 5, 0, None
    )
    even = _Batch(
        "res", "p384", list(range(8)), ["A1"] * 8, [f"{r}1" for r in "BDFHJLNP"], 5, 0, None
    )
    nxt = _Batch(
        "res", "p384", list(range(8)), ["A1"] * 8, [f"{r}2" for r in "ACEGIKMO"], 5, 0, None
    )
    assert [len(g) for g in groups_8([odd, even, nxt], "per_column")] == [2, 1]
    assert [len(g) for g in groups_8([odd, even, nxt], "per_destination")] == [1, 1, 1]


def test_a_96_well_plate_stamped_into_a_quadrant_of_a_384_well_plate_interleaves() -> None:
    from agents.task.planning._world import World
    from agents.task.planning.families._layout import _quadrant

    world = World(Labs(CORPUS)["plate384"].view)
    src = ["A1", "A2", "B1", "H12"]
    assert _quadrant("into quadrant 1 of x", "sample_plate", src, "assay_384", world) == [
        "A1", "A3", "C1", "O23"
    ]  # fmt: skip
    assert _quadrant("into Q4 of x", "sample_plate", src, "assay_384", world) == [
        "B2", "B4", "D2", "P24"
    ]  # fmt: skip
    assert _quadrant("to assay_384 Q1", "sample_plate", src, "assay_384", world) is None


def test_a_unit_on_a_list_heading_or_its_own_line_holds_for_the_list_below() -> None:
    text = "cherrypick list (src -> dst, uL):\nA1 -> A1: 1\nB2 -> A2: 2.5\nthen read dst"
    assert normalise(text).text == (
        "cherrypick list (src -> dst):\nA1 -> A1 1 uL\nB2 -> A2 2.5 uL\nthen read dst"
    )
    assert normalise("EB into libs:\nA1 10\nA2 20\n(volumes in uL)").text == (
        "EB into libs:\nA1 10 uL\nA2 20 uL"
    )


def test_a_volume_said_after_its_pairs_joins_them_and_stays_in_the_trace() -> None:
    samples = Labs(CORPUS)["samples"].view
    result = plan(
        "Cherry pick: samples B3 -> dest_plate A12, samples C7 -> dest_plate B12; 15 uL each",
        samples,
    )
    assert _pairs(result) == [("B3", "A12", 15.0), ("C7", "B12", 15.0)]
    assert isinstance(result, Plan) and any(
        t.clause == "15 uL each" and t.steps for t in result.trace
    )


def test_picks_listed_after_the_following_fill_the_destination_in_order() -> None:
    samples = Labs(CORPUS)["samples"].view
    result = plan(
        "Hit-pick the following samples from samples into dest_plate column 12 (20 uL each): "
        "B3, C7, E2",
        samples,
    )
    assert _pairs(result) == [("B3", "A12", 20.0), ("C7", "B12", 20.0), ("E2", "C12", 20.0)]


def test_a_goal_said_before_its_steps_is_a_setting_and_a_fine_head_no_lab_fact() -> None:
    samples = Labs(CORPUS)["samples"].view
    result = plan(
        "Could you make me a replicate plate? 10 uL from each well of samples into the same "
        "position on dest_plate, multichannel is fine.",
        samples,
    )
    assert isinstance(result, Plan), result
    assert [t.kind for t in result.trace][:1] == ["setting"]
    assert len({(s.args["labware"], w) for s in result.steps if s.command == "dispense"
                for w in s.args["wells"]}) == 96  # fmt: skip


def test_a_form_of_fields_becomes_one_sentence_under_its_heading() -> None:
    form = "Stamp:\n- source: samples\n- destination: dest_plate\n- volume: 10 uL\n- 8-channel"
    assert rewrite(form) == "Stamp from samples to dest_plate, 10 uL, 8-channel"
    picks = "Cherry-pick\nsource plate: s\ndest plate: d\nA1 -> B1 10 uL"
    assert rewrite(picks) == "Cherry-pick from s to d:\nA1 -> B1 10 uL"
    assert rewrite("source: s\nsee the sheet") == "source: s\nsee the sheet"  # no destination


def test_one_channel_takes_each_source_s_moves_together_unless_a_source_is_filled_first() -> None:
    from agents.task.planning import _pipetting as pip
    from agents.task.planning._pipetting import _by_source

    ops = [pip.Op(("s", f"A{c}"), ("d", f"{r}{c}"), 5.0) for r in "AB" for c in (1, 2)]
    assert [o.src[1] for o in _by_source(ops)] == ["A1", "A1", "A2", "A2"]
    chain = [pip.Op(("d", "B1"), ("d", "C1"), 5.0), pip.Op(("d", "A1"), ("d", "B1"), 5.0)]
    assert _by_source(chain) == chain  # B1 is filled by a move: the order written counts
