"""Dilutions and top-ups as protocols write them (round 6): a fold said after the series
("serial dilution (2x)"), a ratio right after a liquid whose name ends in a concentration
("IgG standard 1:2"), "and mix" after a top-up, and "each sample" diluted into a plate."""

from __future__ import annotations

import pytest

from agents.task.planning._lexicon import Lexicon
from agents.task.planning._quantities import fold
from agents.task.planning.families._dilution_words import KEEP_EXCESS
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


@pytest.mark.parametrize(
    ("text", "factor"),
    [
        ("serial dilution (2x) of IgG across row A", 2.0),
        ("serial dilution, 3x, IgG standard across row A", 3.0),
        ("titration (4x) down column 2", 4.0),
    ],
)
def test_a_factor_right_after_the_series_word_is_its_fold(text: str, factor: float) -> None:
    assert fold(text) == (factor, "fold")


def test_a_series_mixed_3x_has_no_fold_from_the_mixing() -> None:
    assert fold("serial dilution across row A, mix 3x") is None


def test_the_one_of_a_ratio_is_not_the_end_of_a_liquid_name() -> None:
    lex = Lexicon(LABS["l6_titer"].view)
    found = lex.liquid_mentions("titrate the IgG standard 1:2 across elisa_384")
    assert [m.written for m in found] == ["IgG standard"]


def test_and_mix_after_a_top_up_mixes_each_well_it_tops_up() -> None:
    plan = RulePlanner().plan(
        "top up cell_plate column 1 to 200 µl with medium and mix", LABS["cells"].view
    )
    assert isinstance(plan, Plan)
    (step,) = [s for s in plan.steps if s.command == "transfer"]
    assert step.args["mix_after"] == 3
    assert step.args["volume_ul"] == 50.0


def test_each_sample_diluted_into_a_plate_keeps_its_position() -> None:
    plan = RulePlanner().plan(
        "make 1:50 dilutions of each donor plasma into dil_96, 100 uL final, "
        "1x assay buffer as diluent",
        LABS["l6_titer"].view,
    )
    assert isinstance(plan, Plan)
    moved = {
        (s.args["source_well"], tuple(s.args["destination_wells"]))
        for s in plan.steps
        if s.command == "transfer" and s.args["source"] == "sera_in"
    }
    assert moved == {(w, (w,)) for w in (f"{r}{c}" for r in "ABCDEFGH" for c in (1, 2, 3))}


def test_a_contraction_names_no_liquid() -> None:
    lex = Lexicon(LABS["l6_titer"].view)
    assert lex.liquid_mentions("Don't discard the excess from the last well") == []


@pytest.mark.parametrize(
    "text",
    [
        "Don't discard the excess from the last well",
        "no discard from the last well",
        "leave the extra in A6",
        "without discarding anything",
    ],
)
def test_keeping_the_last_wells_excess_is_read(text: str) -> None:
    assert KEEP_EXCESS.search(text)


def test_a_discard_said_after_a_series_is_taken_once() -> None:
    plan = RulePlanner().plan(
        "2-fold serial dilution of dye in buffer across plate_1 A1-A6, 100 uL final. "
        "Discard 100 uL from the last well.",
        LABS["standard"].view,
    )
    assert isinstance(plan, Plan)
    taken = [s for s in plan.steps if s.command == "aspirate" and s.args["wells"] == ["A6"]]
    assert [s.args["volume_ul"] for s in taken] == [100.0]
