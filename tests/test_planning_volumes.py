"""Top-ups, normalisation lists and media changes as people write them: "so each well reaches
60 uL", "bring each to 20 uL", "normalise to 50 uL using the volumes below: ...", "aspirate the
media and replace with 150 uL fresh medium in <wells>", "(75 uL out, 75 uL in)", "replace half
of the medium"; and the normaliser's "A1 to B1 to C1" chain."""

from __future__ import annotations

import pytest

from agents.task.planning._clauses import split
from agents.task.planning._normalise import normalise
from agents.task.planning.families._amounts import share as share_of
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.plan_sim import simulate
from evals.planning import Labs

LABS = Labs()


def _ops(request: str, lab: str) -> list[tuple[str, str | None, float]]:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan), result
    sim = simulate(LABS[lab], result)
    assert sim.ok, sim.error
    return [(op.src, op.dst, round(op.volume, 3)) for op in sim.ops]


def test_three_wells_joined_by_to_are_a_chain_and_two_are_a_range() -> None:
    assert normalise("carry 40 uL from A1 to B1 to C1 to D1").text == (
        "carry 40 uL from A1 -> B1 -> C1 -> D1"
    )
    assert normalise("spot A1 into A1 to A4").text == "spot A1 into A1 to A4"


@pytest.mark.parametrize(
    "request_text",
    [
        "add water to dna_plate column 1 so each well reaches 60 uL",
        "pipette water into dna_plate column 1 until each holds 60 uL",
    ],
)
def test_a_volume_each_well_should_reach_is_a_top_up_by_the_difference(request_text: str) -> None:
    ops = _ops(request_text, "samples")
    assert ("reservoir:A1", "dna_plate:A1", 40.0) in ops  # the column holds 20 uL each
    assert all(v == 40.0 for _, _, v in ops)


def test_bring_each_to_a_volume_tops_up_the_wells_just_filled() -> None:
    ops = _ops(
        "transfer 5 uL from dna_plate A1, 8 uL from B1 and 10 uL from C1 into dest_plate A1, B1, "
        "C1, then add water to bring each to 20 uL",
        "samples",
    )
    water = {dst: v for src, dst, v in ops if src == "reservoir:A1"}
    assert water == {"dest_plate:A1": 15.0, "dest_plate:B1": 12.0, "dest_plate:C1": 10.0}


def test_a_list_of_volumes_under_a_normalisation_target_is_what_is_added() -> None:
    ops = _ops(
        "Normalise to 50 uL with water using the volumes below: dna_plate A1 30 uL, A2 15 uL, "
        "B1 30 uL",
        "samples",
    )
    assert sorted(ops) == sorted(
        [
            ("reservoir:A1", "dna_plate:A1", 30.0),
            ("reservoir:A1", "dna_plate:A2", 15.0),
            ("reservoir:A1", "dna_plate:B1", 30.0),
        ]
    )


def test_a_removal_takes_the_wells_its_refill_names_and_the_refill_only_adds() -> None:
    ops = _ops(
        "aspirate the media to waste and replace with 150 uL fresh medium in cell_plate column 1",
        "cells",
    )
    out = [(src, v) for src, dst, v in ops if dst is None]
    into = [(dst, v) for src, dst, v in ops if src == "reservoir:A1"]
    assert len(out) == 8 and all(v == 150.0 for _, v in out)
    assert len(into) == 8 and all(v == 150.0 for _, v in into)


def test_a_bare_volume_in_after_one_out_is_the_lab_s_one_medium() -> None:
    ops = _ops("half media change on cell_plate row A (75 uL out, 75 uL in)", "cells")
    assert sum(1 for _, dst, _ in ops if dst is None) == 12
    assert sum(1 for src, _, _ in ops if src == "reservoir:A1") == 12


@pytest.mark.parametrize(
    ("text", "share"),
    [
        ("replace half of the medium", 0.5),
        ("exchange 50% of the media", 0.5),
        ("swap a third of the spent medium", 1 / 3),
        ("replace the medium", None),
    ],
)
def test_a_share_of_what_the_wells_hold_is_read_as_a_fraction(
    text: str, share: float | None
) -> None:
    assert share_of(text) == (pytest.approx(share) if share is not None else None)


def test_replacing_half_the_medium_exchanges_half_of_what_each_well_holds() -> None:
    ops = _ops("replace half of the medium in cell_assay column 4 with fresh media", "assay_dev")
    assert {v for _, _, v in ops} == {50.0}


def test_whole_columns_joined_by_arrows_are_carried_column_to_column() -> None:
    assert normalise("then column 1 -> column 2 -> column 3, 100 uL each").text == (
        "then column to column from 1 to 3, 100 uL each"
    )
    assert normalise("row A -> row B -> row C").text == "row to row from A to C"


def test_a_unit_noted_on_a_heading_line_applies_to_the_bare_volumes_under_it() -> None:
    text = normalise("Normalise dna_plate with water (uL):\nA1 10\nB1 12.5\n\nC1 5").text
    assert text.splitlines() == [
        "Normalise dna_plate with water:",
        "A1 10 uL",
        "B1 12.5 uL",
        "C1 5",
    ]  # a blank line ends the heading's list


def test_plus_a_liquid_to_a_volume_tops_up_the_wells_just_filled() -> None:
    ops = _ops(
        "Normalise pcr_plate column 2: 10 uL of each gDNA into norm_plate column 2, plus water "
        "to 40 uL",
        "libprep_dev",
    )
    water = [(dst, v) for src, dst, v in ops if src == "res:A2"]
    assert len(water) == 8 and all(v == 30.0 for _, v in water)


def test_dilute_to_a_volume_without_a_factor_is_a_top_up() -> None:
    ops = _ops("dilute each library in libs_in A1-A3 to 60 uL with TE", "libprep_dev")
    assert sorted(ops) == [("res:A1", f"libs_in:A{c}", 20.0) for c in (1, 2, 3)]


def test_a_12_well_culture_plate_is_a_plate_not_a_reservoir() -> None:
    ops = _ops("Change the medium in plate12 row A: remove 1 mL and add 1 mL fresh complete DMEM",
               "culture_dev")  # fmt: skip
    assert {src for src, dst, _ in ops if dst is None} == {f"plate12:A{c}" for c in range(1, 5)}


def test_volume_in_after_volume_out_is_never_a_second_removal() -> None:
    ops = _ops("media exchange on plate12: 1.5 mL out, 1.5 mL in", "culture_dev")
    assert sum(v for src, _, v in ops if src == "media_trough:A1") == pytest.approx(12 * 1500)


@pytest.mark.parametrize(
    "request_text",
    ["QS dna_plate column 1 to 50 uL with water", "fill dna_plate column 1 to 50 uL with water"],
)
def test_qs_and_fill_to_a_volume_top_up_by_the_difference(request_text: str) -> None:
    ops = _ops(request_text, "samples")
    assert len(ops) == 8 and all(v == 30.0 for _, _, v in ops)


def test_every_well_that_has_the_dna_is_only_the_wells_that_hold_something() -> None:
    ops = _ops("top up every well of dna_plate that has DNA to 80 uL with water", "samples")
    assert len(ops) == 24


def test_a_volume_per_step_written_with_a_slash_is_a_volume() -> None:
    assert (
        normalise("chain A1 -> A2 -> A3, 100 uL/step").text
        == "chain A1 -> A2 -> A3, 100 uL per step"
    )


def test_a_removal_that_leaves_a_volume_takes_only_what_is_above_it() -> None:
    ops = _ops("take cell_plate row B down to 50 uL, then refill to 150 uL with medium", "cells")
    assert {v for _, dst, v in ops if dst is None} == {100.0}  # 150 held, 50 kept
    assert {v for src, _, v in ops if src == "reservoir:A1"} == {100.0}  # refilled to 150


def test_an_equal_volume_adds_to_each_well_what_it_holds() -> None:
    ops = _ops("add the same volume of buffer to each well of dna_plate column 2", "samples")
    assert len(ops) == 8 and {v for _, _, v in ops} == {35.0}


def test_a_liquid_to_a_volume_after_a_comma_is_a_top_up_of_its_own() -> None:
    texts = [c.text for c in split(normalise("A1 3 uL, A2 6 uL from libs_in, TE to 30 uL"))]
    assert texts[-1] == "TE to 30 uL"


@pytest.mark.parametrize(
    "request_text",
    [
        "top up dna_plate column 1 with 15 uL water",
        "top each well of dna_plate column 1 up with 15 uL of water",
        "top off dna_plate A1:H1 by 15 uL with water",
    ],
)
def test_a_top_up_with_an_amount_adds_that_amount_to_each_well(request_text: str) -> None:
    ops = _ops(request_text, "samples")
    assert {v for _, _, v in ops} == {15.0}  # added on top of the 20 uL, not "up to 15 uL"
    assert len(ops) == 8


def test_a_top_up_to_a_volume_still_adds_the_difference() -> None:
    ops = _ops("top up dna_plate A1 with water to 50 uL", "samples")
    assert ops == [("reservoir:A1", "dna_plate:A1", 30.0)]


def test_replacing_the_medium_with_a_volume_takes_all_of_it_out_first() -> None:
    ops = _ops("Replace all the medium in cell_plate row A with 200 uL medium", "cells")
    out = {src: v for src, dst, v in ops if dst is None}
    assert out["cell_plate:A1"] == 150.0 and len(out) == 12
    assert ("reservoir:A1", "cell_plate:A1", 200.0) in ops


def test_of_each_after_a_fill_takes_from_the_wells_just_filled() -> None:
    ops = _ops("add 50 uL buffer to dest_plate A1-A4, then pool 40 uL of each into dest_plate H12",
               "samples")  # fmt: skip
    pooled = [(src, v) for src, dst, v in ops if dst == "dest_plate:H12"]
    assert pooled == [(f"dest_plate:A{i}", 40.0) for i in range(1, 5)]


def test_pooling_all_of_the_wells_moves_what_each_holds() -> None:
    ops = _ops("pool all of dna_plate A1:A3 into dest_plate A1", "samples")
    assert sorted(ops) == [
        ("dna_plate:A1", "dest_plate:A1", 20.0),
        ("dna_plate:A2", "dest_plate:A1", 35.0),
        ("dna_plate:A3", "dest_plate:A1", 50.0),
    ]


def test_wells_named_without_a_plate_after_a_fill_are_on_the_plate_just_filled() -> None:
    ops = _ops("add 50 uL water to dest_plate A1-A3, then transfer 10 uL from A1 to samples A1",
               "samples")  # fmt: skip
    assert ("dest_plate:A1", "samples:A1", 10.0) in ops


def test_wells_named_without_a_plate_are_on_the_one_plate_that_holds_them() -> None:
    ops = _ops("pool A4-A6 into dest_plate H1, 5 uL each", "samples")
    assert sorted(src for src, _, _ in ops) == ["samples:A4", "samples:A5", "samples:A6"]


def test_wells_named_without_a_plate_that_two_plates_hold_are_asked_about() -> None:
    result = RulePlanner().plan("pool B1-B3 into dest_plate H1, 5 uL each", LABS["samples"].view)
    assert result.kind == "clarification" and result.missing == ["plate"]


def test_concentrations_are_read_with_their_units_and_nm_stays_a_wavelength() -> None:
    from agents.task.planning.families import _concentrations as conc

    level = conc.target("normalise to 10 ng/µL with EB")
    assert level is not None and (level.value, level.dimension) == (10.0, "mass")
    molar = conc.target("bring each to 2 nM")
    assert molar is not None and (molar.value, molar.dimension) == (2.0, "molar")
    assert conc.target("read at 450 nm") is None
    mass = conc.mass("take 50 ng of each library")
    assert mass is not None and mass.value == 50.0


def test_normalising_in_place_adds_what_each_wells_volume_and_concentration_need() -> None:
    ops = _ops("normalise dna_plate A1 and A2 to 10 ng/uL with water: A1 30 ng/uL, A2 20 ng/uL",
               "samples")  # fmt: skip
    assert sorted(ops) == [
        ("reservoir:A1", "dna_plate:A1", 40.0),
        ("reservoir:A1", "dna_plate:A2", 35.0),
    ]


def test_a_well_below_the_target_concentration_is_refused() -> None:
    result = RulePlanner().plan(
        "normalise dna_plate A1 to 10 ng/uL with water (A1 is 5 ng/uL)", LABS["samples"].view
    )
    assert result.kind == "refusal" and result.code == "capacity"


def test_rows_pooled_into_as_many_wells_go_row_by_row() -> None:
    from agents.task.planning.families._pairing import pair

    rows = [f"{r}{c}" for r in "AB" for c in range(1, 4)]
    assert pair(rows, ["H1", "H2"]) == [
        ("A1", "H1"), ("A2", "H1"), ("A3", "H1"), ("B1", "H2"), ("B2", "H2"), ("B3", "H2")
    ]  # fmt: skip


def test_a_wash_title_over_lines_that_say_their_own_moves_is_only_a_title() -> None:
    ops = _ops(
        "Wash: remove 10 uL from cells384 A1-A2 to waste, then add 10 uL HBSS-HEPES", "b2_cmpd"
    )
    assert [(src, dst) for src, dst, _ in ops][:2] == [("cells384:A1", None), ("cells384:A2", None)]


def test_the_liquid_taken_out_names_the_one_work_plate_holding_it_in_those_wells() -> None:
    ops = _ops("remove 30 uL of cell lysate from column 6 to waste", "b2_bca")
    assert {src for src, _, _ in ops} == {f"lysates:{r}6" for r in "ABCDEFGH"}
    asked = RulePlanner().plan(
        "remove 30 uL of cell lysate from column 8 to waste", LABS["b2_bca"].view
    )
    assert asked.kind == "clarification" and asked.missing == ["wells"]
