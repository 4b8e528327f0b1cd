"""Normalisation and pooling as library-prep and NGS notebooks write them: the target said as
a slot ("target 5 ng/uL", "2 nM in 20 uL"), a mass in a final volume ("10 ng in 5 uL"), moles
over a molar concentration ("10 fmol of each"), pasted concentration tables, and a target after
"column N to" that is neither a range of columns nor a 1:2 ratio."""

from __future__ import annotations

import pytest

from agents.task.planning import _quantities as qty
from agents.task.planning._conc_tables import rewrite
from agents.task.planning._wellsets import find_all
from agents.task.planning.families import _concentrations as conc


@pytest.mark.parametrize(
    ("text", "value", "dimension"),
    [
        ("normalise A1-A4: target 5 ng/uL, final 30 uL", 5.0, "mass"),
        ("target conc: 2 nM, 20 uL", 2.0, "molar"),
        ("normalise A1-A3 into B1-B3, 2 nM in 20 uL RSB", 2.0, "molar"),
        ("bring col 1 to 4 ng/uL", 4.0, "mass"),
        ("gDNA norm: 10 ng/uL x 50 uL, low-TE", 10.0, "mass"),
        ("into norm_out A1:C1, 2 nM × 20 µL, EB", 2.0, "molar"),
    ],
)
def test_the_target_is_read_however_it_is_said(text: str, value: float, dimension: str) -> None:
    level = conc.target(text)
    assert level is not None and (level.value, level.dimension) == (value, dimension)


def test_a_well_s_own_concentration_in_a_volume_is_not_the_target() -> None:
    assert conc.target("normalise A1 (10 ng/uL in 30 uL)") is None


def test_a_mass_in_a_final_volume_is_a_mass_per_well() -> None:
    level = conc.mass("normalise A1-A3 to 10 ng in 5 uL")
    assert level is not None and (level.value, level.dimension) == (10.0, "amount")


def test_moles_of_each_are_taken_from_molar_concentrations_only() -> None:
    moles = conc.mass("pool 10 fmol of each library")
    assert moles is not None and moles.dimension == "moles"
    assert conc.matches(moles, conc.Level(4.0, "molar"))
    assert not conc.matches(moles, conc.Level(4.0, "mass"))


def test_a_target_after_column_to_is_neither_a_ratio_nor_a_column_range() -> None:
    assert qty.fold("normalise column 1 to 2 ng/uL in 20 uL") is None
    sets = find_all("normalise column 1 to 2 ng/uL")
    assert [s.text for s in sets] == ["column 1"]


def test_a_concentration_table_becomes_one_line_per_well() -> None:
    text = "Normalise A2-B2:\nWell  Conc (ng/uL)\nA2  10\nB2  2.5"
    assert rewrite(text) == "Normalise A2-B2:\nA2 10 ng/uL\nB2 2.5 ng/uL"


def test_a_unit_column_gives_each_row_its_unit() -> None:
    text = "Pool:\nWell,Sample,Conc,Unit\nA1,S1,10,nM\nA2,S2,8,nM"
    assert rewrite(text) == "Pool:\nA1 10 nM\nA2 8 nM"


def test_a_table_without_a_well_column_is_left_as_written() -> None:
    text = "Samples:\nName  Conc (ng/uL)\nS1  10"
    assert rewrite(text) == text


def test_a_diluent_whose_name_says_a_strength_is_not_the_stock() -> None:
    from agents.task.planning._strengths import diluent_said, name_fold

    assert diluent_said("dilute each library to 1 nM in ")
    assert name_fold("make 1x SYBR from the 2x SYBR mix", ["2x SYBR mix"]) == 2.0


def test_conc_with_a_dot_does_not_end_a_sentence() -> None:
    from agents.task.planning._clauses import split
    from agents.task.planning._normalise import normalise

    clauses = split(normalise("Normalise A1-A3 to 4 nM. Conc. (nM): 20, 12, 8"))
    assert [c.text for c in clauses][-1].endswith("20, 12, 8")
    assert not any(c.text.strip() == "Conc." for c in clauses)


def test_two_pools_with_their_own_volumes_are_two_clauses() -> None:
    from agents.task.planning._gapping import gaps

    text = "Pool p A1-A4 into q A1 (10 uL each) and p B1-B4 into q B1 (10 uL each)"
    assert gaps(text, text) == [
        "Pool p A1-A4 into q A1 (10 uL each)",
        "p B1-B4 into q B1 (10 uL each)",
    ]


def test_pairs_sharing_one_volume_stay_one_clause() -> None:
    from agents.task.planning._gapping import gaps

    text = "Transfer 10 uL from p A1 to q A1 and p B1 to q B2"
    assert gaps(text, text) == [text]


def test_a_normalisation_sheet_is_its_diluent_then_its_samples() -> None:
    from agents.task.planning._volume_sheets import rewrite as sheet

    text = "Sheet (src -> dst):\nWell, Sample vol (uL), Water vol (uL)\nA1, 4, 16\nB1, 5, 15"
    assert sheet(text) == (
        "Sheet: Add Water to dst A1, B1 (16, 15 uL), then transfer src A1, B1 to dst A1, B1 "
        "(4, 5 uL)"
    )


def test_a_sheet_without_its_plates_is_left_as_written() -> None:
    from agents.task.planning._volume_sheets import rewrite as sheet

    text = "Sheet:\nWell, Sample vol (uL), Water vol (uL)\nA1, 4, 16"
    assert sheet(text) == text


def test_a_concentration_spelled_in_words_is_a_number() -> None:
    from agents.task.planning._numberwords import digits

    assert digits("to five ng/uL, ten ng of each, two nM, one tip") == (
        "to 5 ng/uL, 10 ng of each, 2 nM, one tip"
    )


def test_a_level_after_to_is_not_a_place_of_a_verbless_pair() -> None:
    from agents.task.planning._gapping import gaps

    text = "Normalise to 4 nM, final 20 uL, with EB buffer into norm_out A1-A3"
    assert gaps(text, text) == [text]
