"""Dilutions written on other benches: lab names said short ("BSA" for "BSA 2 mg/mL", "amp"
for the lab's ampicillin), spans written with arrows ("col 1 -> col 12"), controls that hold
the diluent only, the excess of a chain thrown away, and the clause order kept around a chain."""

from __future__ import annotations

import pytest

from agents.task.planning._blanks import split_blanks
from agents.task.planning._entities import extract
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._quantities import fold
from agents.task.planning._series import series
from agents.task.planning._strengths import name_fold
from agents.task.planning._wellsets import find_all
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.plan_sim import simulate
from evals.planning import Labs

LABS = Labs()


def _names(text: str, lab: str) -> list[str]:
    return [m.name for m in Lexicon(LABS[lab].view).liquid_mentions(text)]


@pytest.mark.parametrize(
    ("text", "lab", "name"),
    [
        ("BSA standards", "dil_bca", "BSA 2 mg/mL"),
        ("in PBS", "dil_bca", "PBS pH 7.4"),
        ("serially dilute amp 1:2", "dil_mic", "ampicillin 256 ug/mL"),
        ("cipro 1:2 in broth", "dil_mic", "cipro-HCl"),
    ],
)
def test_a_lab_liquid_is_found_by_its_first_word_or_its_shorthand(
    text: str, lab: str, name: str
) -> None:
    assert _names(text, lab) == [name]


@pytest.mark.parametrize("text", ["col 1 to col 12", "row 3 of the plate", "1:10 dil in water"])
def test_shorthand_for_columns_rows_and_dilutions_names_no_liquid(text: str) -> None:
    assert _names(text, "dil_mic") == []


def test_columns_joined_by_an_arrow_are_a_span() -> None:
    (found,) = find_all("col 1 -> col 12")
    wells = found.expand(8, 12)
    assert wells[:2] == ["A1", "B1"] and len(set(wells)) == 96


def test_a_growth_control_column_holds_the_diluent_only() -> None:
    ents = extract("col 12 = growth control", Lexicon(LABS["dil_mic"].view), ())
    split_blanks(ents)
    assert [w.text for w in ents.blanks] == ["col 12"] and not ents.wellsets


def _plan(request: str, lab: str) -> Plan:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan), result
    return result


def test_the_excess_thrown_away_after_a_chain_comes_from_its_last_wells_only() -> None:
    plan = _plan(
        "put 100 uL buffer in plate_1 A2-A8, 200 uL dye in A1, then serially transfer 100 uL "
        "from A1 to A8, discard the excess 100 uL",
        "standard",
    )
    drained = [op.src for op in simulate(LABS["standard"], plan).ops if op.dst is None]
    assert drained == ["plate_1:A8"]


def test_a_discard_said_after_a_spelled_out_dilution_stays_after_its_chain() -> None:
    plan = _plan(
        "MIC set-up on mic_a with the 8-channel: CAMHB 100 uL into columns 2-12, 200 uL "
        "ampicillin into column 1, then 2-fold serial dilution from column 1 to column 10, "
        "discard 100 uL from column 10.",
        "dil_mic",
    )
    ops = simulate(LABS["dil_mic"], plan).ops
    last_carry = max(i for i, op in enumerate(ops) if op.dst == "mic_a:A10")
    first_drain = min(i for i, op in enumerate(ops) if op.dst is None)
    assert last_carry < first_drain


def test_mixing_said_on_a_line_under_a_dilution_heading_is_how_each_step_mixes() -> None:
    plan = _plan(
        "2-fold serial dilution of cipro-HCl in CAMHB, with the 8-channel:\n- mic_b columns "
        "1-10\n- 50 uL final\n- mix 5x",
        "dil_mic",
    )
    sim = simulate(LABS["dil_mic"], plan)
    assert {op.mix_after for op in sim.ops if op.src.startswith("mic_b") and op.dst} == {5}
    assert not [m for m in sim.mixes if m.after_op is None]


@pytest.mark.parametrize(
    ("text", "names", "factor"),
    [
        ("make 1x SYBR from the ###", ["2x SYBR mix"], 2.0),
        ("dilute the ### to 0.5 mg/mL with PBS", ["BSA 2 mg/mL", "PBS pH 7.4"], 4.0),
        ("add ### to A1", ["BSA 2 mg/mL"], None),
        ("mix 3x", ["10x buffer"], None),
    ],
)
def test_a_fold_comes_from_the_strength_a_stocks_name_says_and_the_strength_asked(
    text: str, names: list[str], factor: float | None
) -> None:
    assert name_fold(text, names) == factor


@pytest.mark.parametrize(
    ("text", "points", "blanks"),
    [
        ("1000, 100, 10, 1, 0.1 copies/uL and 0", 5, 1),
        ("1e6 to 1e1 copies in water, 10-fold", 6, 0),
    ],
)
def test_a_series_is_read_in_copies_and_in_powers_of_ten(
    text: str, points: int, blanks: int
) -> None:
    found = series(text, 10.0)
    assert found is not None and (found.points, found.blanks) == (points, blanks)


def test_a_volume_said_before_carried_is_what_each_step_carries() -> None:
    plan = _plan(
        "gBlock std 1:10 in NFW down dil_96 column 4, 5 points, 18 uL NFW per well and 2 uL "
        "transfers",
        "dil_qpcr",
    )
    carried = {
        op.volume
        for op in simulate(LABS["dil_qpcr"], plan).ops
        if op.src.startswith("dil_96") and op.dst
    }
    assert carried == {2.0}


@pytest.mark.parametrize(
    ("request_", "wells"),
    [
        ("BSA standard: 7 steps of 1:2 in PBS down dil_plate column 5, 120 uL per well", 8),
        ("compound 1:3 in DMSO across dil_plate row A, 11 pts, 30 uL/well", 11),
    ],
)
def test_a_count_of_steps_is_transfers_and_a_count_of_points_is_wells(
    request_: str, wells: int
) -> None:
    plan = _plan(request_, "assay_dev")
    final = simulate(LABS["assay_dev"], plan).final["dil_plate"]
    assert len([w for w, v in final.items() if v > 0]) == wells


def test_the_stock_said_into_the_first_well_starts_the_chain_and_the_diluent_is_still_added() -> (
    None
):
    plan = _plan(
        "2-fold dilutions of BSA standard in PBS along dil_plate row C, 8 wells, starting with "
        "200 uL BSA standard in C1, 100 uL moved each time",
        "assay_dev",
    )
    sim = simulate(LABS["assay_dev"], plan)
    assert sim.final["dil_plate"]["C2"] == 100
    assert sum(op.volume for op in sim.ops if op.dst == "dil_plate:C1") == 200


def test_a_count_before_a_plural_liquid_name_counts_points_not_a_liquid() -> None:
    ents = extract(
        "down std_curve column 1, 7 standards and a zero", Lexicon(LABS["elisa_dev"].view), ()
    )
    assert not ents.liquids and [w.text for w in ents.wellsets] == ["column 1"]


@pytest.mark.parametrize(
    ("text", "factor"),
    [
        ("standard 2x down col 12", (2.0, "fold")),
        ("mix 3x down the column", None),
        ("dilute dye one in five", (5.0, "ratio")),
    ],
)
def test_a_fold_is_read_from_words_and_counts_of_x_but_not_from_a_count_of_mixes(
    text: str, factor: tuple[float, str] | None
) -> None:
    assert fold(text) == factor


def test_a_liquid_followed_by_a_ratio_is_no_plate_id() -> None:
    ents = extract("Dilute sample 1:5 in assay diluent", Lexicon(LABS["elisa_dev"].view), ())
    assert not ents.unknown_labware and ents.fold == (5.0, "ratio")


def test_rows_said_under_a_heading_that_names_columns_are_those_rows_of_those_columns() -> None:
    plan = _plan(
        "Standards (std_curve cols 1-2, duplicates): start 250 uL standard in A1/A2, 125 uL "
        "assay diluent in B-H, carry 125 uL down, mix 5x",
        "elisa_dev",
    )
    final = simulate(LABS["elisa_dev"], plan).final["std_curve"]
    assert final.get("B3", 0) == 0 and final["B2"] == 125


def test_a_named_blank_after_one_replicate_chain_is_repeated_after_each() -> None:
    plan = _plan(
        "2-fold serial of standard in assay diluent, std_curve A1-A7 with A8 as blank, "
        "150 uL/well, in duplicate (rows A and B)",
        "elisa_dev",
    )
    assert simulate(LABS["elisa_dev"], plan).final["std_curve"]["B8"] == 150


def test_a_diluent_already_in_the_wells_is_used_where_it_is() -> None:
    plan = _plan(
        "titr_plate already has 100 uL RPMI-1640 in columns 2-12 and the mAb-7 stock in column "
        "1. Serially dilute 1:2 from column 1 to 12 with the 8-channel, 100 uL transfers.",
        "dil_prefill",
    )
    ops = simulate(LABS["dil_prefill"], plan).ops
    assert ops and all(op.src.startswith("titr_plate") for op in ops)


def test_a_fact_gives_a_volume_only_to_the_place_it_is_said_with() -> None:
    result = RulePlanner().plan(
        "titr_plate already has 100 uL RPMI-1640 in columns 2-12 and the mAb-7 stock in column "
        "1. Mix titr_plate A1 3 times.",
        LABS["dil_prefill"].view,
    )
    assert isinstance(result, Plan), result


def test_a_strength_to_make_from_a_stock_of_unknown_strength_asks_for_the_fold() -> None:
    result = RulePlanner().plan(
        "make 70% ethanol from the ethanol with water, 1 mL in each of block_1 B1-B4",
        LABS["deepwell"].view,
    )
    assert result.kind == "clarification" and "fold" in result.missing


def test_a_ratio_before_a_volume_is_no_list_of_volumes() -> None:
    from agents.task.planning._quantities import quantities

    found = quantities("dye into buffer, 1:3, 120 uL per well")
    assert [q.value for q in found if q.kind == "volume"] == [120.0]


def test_column_to_column_from_one_to_four_names_columns_1_to_4() -> None:
    (found,) = find_all("column to column from 1 to 4 on plate_2")
    assert sorted({int(w[1:]) for w in found.expand(8, 12)}) == [1, 2, 3, 4]


def test_a_genus_initial_in_a_liquids_name_ends_no_sentence() -> None:
    from agents.task.planning._clauses import _SENTENCE

    assert len(_SENTENCE.split("dilutions of the E. coli inoculum in CAMHB")) == 1
    assert len(_SENTENCE.split("add dye to row A. Then shake")) == 2
