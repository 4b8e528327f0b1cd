"""Serial dilutions and standard curves as people lay them out: blanks after the points,
replicates in named rows or columns, chains under a dilution heading, and the stages' pieces
that read them (the tail-blank count, the replicate lanes, the replicate words)."""

from __future__ import annotations

import pytest

from agents.task.planning._entities import extract
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._quantities import fold, steps
from agents.task.planning._series import series
from agents.task.planning.families._blank_wells import tail_blanks
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.plan_sim import simulate
from evals.planning import Labs

LABS = Labs()


def _final(request: str, lab: str = "standard") -> dict[str, float]:
    """The wells' final volumes after planning ``request`` and simulating it on the lab's twins."""
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan), result
    sim = simulate(LABS[lab], result)
    assert sim.ok, sim.error
    return {f"{p}:{w}": v for p, wells in sim.final.items() for w, v in wells.items()}


def _moves(request: str, lab: str = "standard") -> set[tuple[str, str | None]]:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan), result
    return {(op.src, op.dst) for op in simulate(LABS[lab], result).ops}


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("7 points plus a blank", 1),
        ("6 standards and 2 blanks", 2),
        ("6 points of 1:2, then two blanks", 2),
        ("6 points + 2 blanks", 2),
        ("with blanks in G12 and H12", 0),
        ("from A1 to G1, blank H1", 0),
        ("H1 is the blank", 0),
    ],
)
def test_blanks_said_after_the_points_are_counted_and_named_blanks_are_not(
    text: str, count: int
) -> None:
    assert tail_blanks(text) == count


@pytest.mark.parametrize(
    "request_text",
    [
        "Standard curve: dye, 7 standards plus a blank down column 1 of plate_1, 2-fold, 100 uL",
        "standards: 2-fold series of dye in buffer in plate_1 A1 to H1 with H1 as the blank, "
        "100 uL final",
        "Set up a standard curve of dye down column 1 of plate_1: 7 points of 1:2, then a blank, "
        "100 uL each",
    ],
)
def test_the_blank_after_a_curve_holds_diluent_only_and_no_dilution_reaches_it(
    request_text: str,
) -> None:
    final = _final(request_text)
    assert final["plate_1:H1"] == pytest.approx(100)
    assert final["plate_1:G1"] == pytest.approx(100)
    moves = _moves(request_text)
    assert ("plate_1:G1", "plate_1:H1") not in moves
    assert ("reservoir:A2", "plate_1:H1") in moves


def test_a_curve_in_duplicate_runs_along_each_row_named_over_the_span_written() -> None:
    request = (
        "Prepare a 2-fold standard curve of dye in plate_2 A1-A8 in duplicate (rows A and B), "
        "100 uL final, A8 and B8 blank"
    )
    moves = _moves(request)
    assert ("plate_2:A6", "plate_2:A7") in moves and ("plate_2:B6", "plate_2:B7") in moves
    assert not any(dst and dst.endswith(("A9", "B9", "A12")) for _, dst in moves)
    final = _final(request)
    assert final["plate_2:A8"] == final["plate_2:B8"] == pytest.approx(100)


def test_replicates_equal_to_the_columns_named_run_down_those_columns() -> None:
    moves = _moves(
        "standard curve with 8 points in duplicate, dye 2-fold in buffer, plate_1 columns 1-2, "
        "100 uL"
    )
    assert ("plate_1:G1", "plate_1:H1") in moves and ("plate_1:G2", "plate_1:H2") in moves
    assert ("plate_1:A1", "plate_1:A2") not in moves


def test_a_chain_under_a_dilution_heading_that_names_the_stock_is_the_whole_dilution() -> None:
    final = _final(
        "2-fold serial dilution: plate_1 A1 -> A2 -> A3 -> A4 -> A5, 100 uL in each well, "
        "dye into buffer"
    )
    assert [final[f"plate_1:A{c}"] for c in range(1, 6)] == pytest.approx([100] * 5)


def test_a_bare_step_volume_after_a_dilution_is_what_each_step_carries() -> None:
    moves = _moves(
        "serially dilute dye 1:10 down column 2 of plate_2 (A2-F2), 180 uL buffer per well, "
        "transfer 20 uL"
    )
    assert ("plate_2:E2", "plate_2:F2") in moves
    assert ("plate_2:F2", None) not in moves  # the steps are spelled out: F2 keeps its excess


@pytest.mark.parametrize(
    ("text", "replicates"),
    [
        ("Std curve (duplicate, columns 1 and 2)", 2),
        ("rows A and B, duplicate; 100 uL", 2),
        ("in triplicate", 3),
        ("duplicate plate_1 into plate_2", None),
    ],
)
def test_duplicate_as_a_word_in_a_list_is_a_replicate_count_but_not_as_a_verb(
    text: str, replicates: int | None
) -> None:
    ents = extract(text, Lexicon(LABS["standard"].view), ())
    assert ents.replicates == replicates


def test_a_ratio_dilution_of_wells_that_hold_the_stock_adds_diluent_in_place() -> None:
    final = _final("dilute the DNA in dna_plate column 3 1:2 with water", "samples")
    assert final["dna_plate:A3"] == final["dna_plate:H3"] == pytest.approx(100)  # 50 + 50
    assert final["dna_plate:A2"] == pytest.approx(35)  # untouched


def test_an_in_place_dilution_with_an_empty_well_asks_for_the_final_volume() -> None:
    result = RulePlanner().plan("dilute dna_plate A1-A4 1:3 with buffer", LABS["samples"].view)
    assert result.kind == "clarification" and "volume" in result.missing


def test_the_last_well_after_a_chain_is_the_chain_s_last_well_not_all_of_them() -> None:
    moves = _moves(
        "Add 100 uL buffer to plate_1 A2-A6, then 200 uL dye to A1. Serially dilute 100 uL from "
        "A1 through A6, mixing 3 times. Throw away 100 uL from the last well."
    )
    assert [src for src, dst in moves if dst is None] == ["plate_1:A6"]


def test_a_chain_over_a_span_of_columns_runs_along_every_row_filled() -> None:
    moves = _moves(
        "add 100 uL buffer to columns 2-4 of plate_2 and 200 uL dye to column 1, serially "
        "transfer 100 uL from column 1 through column 4"
    )
    assert {("plate_2:A3", "plate_2:A4"), ("plate_2:H3", "plate_2:H4")} <= moves
    assert ("plate_2:A1", "plate_2:B1") not in moves


@pytest.mark.parametrize(
    ("text", "factor"),
    [("1 part dye with 9 parts buffer", 10.0), ("one part stock to 3 parts diluent", 4.0)],
)
def test_parts_of_stock_and_diluent_are_a_ratio(text: str, factor: float) -> None:
    assert fold(text) == (factor, "ratio")


def test_a_ratio_with_a_stock_and_a_diluent_is_a_dilution_even_without_the_word() -> None:
    final = _final("prepare 1:20 dye in buffer, total 200 uL per well, plate_1 D1:D4")
    assert final["plate_1:D1"] == pytest.approx(200)
    moves = _moves("prepare 1:20 dye in buffer, total 200 uL per well, plate_1 D1:D4")
    assert ("reservoir:A2", "plate_1:D1") in moves  # the buffer, never 200 uL of dye alone


@pytest.mark.parametrize(
    ("text", "factor", "points", "blanks"),
    [
        ("1000, 500, 250, 125, 62.5, 31.25, 15.6 and 0 down column 1", 2.0, 7, 1),
        ("standards at 1000, 333, 111, 37, 12.3 ng/mL across row B", 3.0, 5, 0),
        ("100, 10, 1, 0.1 uM", 10.0, 4, 0),
    ],
)
def test_a_series_said_by_its_concentrations_gives_its_factor_points_and_blanks(
    text: str, factor: float, points: int, blanks: int
) -> None:
    found = series(text)
    assert found is not None
    assert (found.fold, found.points, found.blanks) == (factor, points, blanks)


@pytest.mark.parametrize(
    "text", ["columns 1, 2, 3 and 4", "A1, B1, C1, D1 get 40, 20, 10, 5 uL", "1000, 700, 200 ng/mL"]
)
def test_numbers_that_are_not_a_constant_ratio_series_are_not_one(text: str) -> None:
    assert series(text) is None


def test_a_concentration_range_with_its_factor_counts_the_points_across_units() -> None:
    found = series("from 10 mM down to 10 uM in 10-fold steps", 10.0)
    assert found is not None and found.points == 4


def test_n_fold_steps_is_a_factor_not_a_step_count() -> None:
    assert steps("in 10-fold steps") is None
    assert steps("six two-fold steps") == 6


def test_the_next_step_written_out_and_so_on_carries_the_chain_to_its_end() -> None:
    moves = _moves(
        "Put 200 uL standard in std_curve A1. Add 100 uL assay diluent to B1-H1. Transfer 100 uL "
        "from A1 to B1, mix, then B1 to C1 and so on down to G1. H1 gets diluent only.",
        "elisa_dev",
    )
    assert ("std_curve:F1", "std_curve:G1") in moves
    assert ("std_curve:G1", "std_curve:H1") not in moves


def test_std_is_the_lab_s_standard_where_it_has_one() -> None:
    final = _final(
        "stds in duplicate, 2-fold, 8 points down std_curve columns 3 and 4, 100 uL final",
        "elisa_dev",
    )
    assert final["std_curve:A3"] == final["std_curve:H4"] == pytest.approx(100)


def test_one_tip_for_the_chain_carries_the_whole_chain_with_one_tip() -> None:
    request = "2-fold serial dilution of dye in buffer across plate_1 row A, 100 uL final, one tip"
    result = RulePlanner().plan(request + " for the whole thing", LABS["standard"].view)
    assert isinstance(result, Plan)
    sim = simulate(LABS["standard"], result)
    chain = [op for op in sim.ops if op.src.startswith("plate_1") and op.dst]
    assert len(chain) == 11 and len({op.tip for op in chain}) == 1


def test_the_well_a_dilution_starts_from_is_its_stock_not_the_liquid_named_for_diluting() -> None:
    moves = _moves(
        "serially dilute sample_plate A1 1:3 in water down assay_384 column 1, 8 points, 15 uL "
        "per well",
        "plate384",
    )
    assert ("sample_plate:A1", "assay_384:A1") in moves
    assert ("reservoir:A2", "assay_384:B1") in moves  # water, the diluent


def test_a_blank_named_in_brackets_still_gets_its_diluent() -> None:
    final = _final(
        "Std curve of dye down plate_1 column 1, 2-fold, 100 uL final, A1 to G1 (H1 blank)"
    )
    assert final["plate_1:H1"] == pytest.approx(100)


@pytest.mark.parametrize(
    ("text", "factor"),
    [
        ("dilute dye to 1x from 10x with buffer", (10.0, "ratio")),
        ("make 1X buffer from the 10X stock", (10.0, "ratio")),
        ("from 2 mg/mL to 0.5 mg/mL", (4.0, "ratio")),
        ("dilute the 10 mM stock to 100 uM", (100.0, "ratio")),
        ("serially dilute dye 3x down column 2", (3.0, "fold")),
        ("dilute the lysate 5x in water", (5.0, "fold")),
    ],
)
def test_a_fold_is_read_from_two_strengths_or_a_count_of_x_after_dilute(
    text: str, factor: tuple[float, str]
) -> None:
    assert fold(text) == factor


@pytest.mark.parametrize("text", ["mix 3x", "dilute, mix 3x", "dilute it to 1x in buffer"])
def test_a_mixing_count_or_a_target_strength_alone_is_no_fold(text: str) -> None:
    assert fold(text) is None


def test_standards_named_s1_to_s7_are_not_wells() -> None:
    lex = Lexicon(LABS["standard"].view)
    ents = extract("Standards S1-S7 + blank in column 1 of plate_2", lex, ())
    assert [w.text for w in ents.wellsets] == ["column 1"]


def test_a_heading_that_places_the_standards_gives_the_dilution_under_it_its_wells() -> None:
    final = _final(
        "Standards S1-S7 + blank in column 1 of plate_2: top standard is dye, 2-fold steps, "
        "100 uL final, buffer as diluent"
    )
    assert all(final[f"plate_2:{r}1"] == 100 for r in "ABCDEFGH")


def test_a_blank_in_the_last_row_is_not_where_the_chains_run() -> None:
    final = _final(
        "Standard curve in triplicate, plate_1 columns 1-3: 1:2 serial dilution of dye with "
        "buffer, 100 uL final volume, last row blank"
    )
    assert final["plate_1:H3"] == 100 and final["plate_1:G3"] == 100
    assert ("plate_1:G1", "plate_1:H1") not in _moves(
        "Standard curve in triplicate, plate_1 columns 1-3: 1:2 serial dilution of dye with "
        "buffer, 100 uL final volume, last row blank"
    )


def test_dilute_without_a_fold_asks_for_it_rather_than_transferring_the_stock() -> None:
    result = RulePlanner().plan(
        "dilute dye to 1x in buffer, 200 uL in each well of plate_2 column 1", LABS["standard"].view
    )
    assert result.kind == "clarification" and "fold" in result.missing


def test_x_ul_into_y_ul_gives_the_fold_and_each_wells_diluent() -> None:
    final = _final("Serial dilution: 20 uL dye into 180 uL buffer across plate_1 A1 to A4")
    assert final["plate_1:A1"] == final["plate_1:A3"] == 180
    assert final["plate_1:A4"] == 200  # the steps are spelled out: the last well keeps its excess


def test_x_ul_into_y_ul_that_disagrees_with_the_fold_said_is_asked() -> None:
    result = RulePlanner().plan(
        "serial dilution of dye 1:3 across plate_1 A1 to A4, 50 uL into 50 uL buffer",
        LABS["standard"].view,
    )
    assert result.kind == "clarification" and result.missing == ["fold"]


@pytest.mark.parametrize(
    "request_text",
    [
        "serially dilute dye 2-fold along plate_1 A1 to A6, 50 uL into the 50 uL buffer in A2-A6",
        "2-fold serial dilution of dye along plate_1 A1-A6, wells prefilled with 50 uL buffer",
    ],
)
def test_diluent_said_to_be_in_wells_the_lab_has_empty_is_asked(request_text: str) -> None:
    result = RulePlanner().plan(request_text, LABS["standard"].view)
    assert result.kind == "clarification" and result.missing == ["lab_state"]
