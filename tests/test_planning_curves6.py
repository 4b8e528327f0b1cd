"""Stages of the rule planner as kit inserts and plate maps write standard curves: the zero
standard, "cols 1+2", "Std curve" beside a liquid with "std" in its name, "BSA 2-fold" beside
"Pierce BSA 2 mg/mL", "top = standard" and standards named S1..S8 in a plate-map aside."""

from __future__ import annotations

from agents.task.planning._blanks import split_blanks
from agents.task.planning._entities import extract
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import normalise
from agents.task.planning._quantities import fold, steps
from agents.task.planning.models import LabView
from evals.planning import Labs


def _lab(name: str) -> LabView:
    return Labs()[name].view


def test_the_zero_standard_is_a_blank_never_a_count_of_no_points() -> None:
    assert steps("100 uL final, row H zero standard") is None
    assert steps("7 standards and a zero standard") == 7
    ents = extract("2-fold from row A to row G, row H zero", Lexicon(_lab("standard")), ())
    split_blanks(ents)
    assert [w for b in ents.blanks for w in b.expand(8, 12)] == [f"H{c}" for c in range(1, 13)]


def test_columns_joined_by_a_plus_are_two_columns_not_a_ratio() -> None:
    assert fold("duplicate curves in cols 1+2") is None
    assert fold("a 1+9 pre-dilution") == (10.0, "ratio")


def test_curve_words_and_connectives_name_no_liquid() -> None:
    lex = Lexicon(_lab("c6_quant"))
    assert lex.liquid_mentions("Std curve: 8 pts") == []
    assert lex.liquid_mentions("7 standards plus a blank") == []
    assert [m.name for m in lex.liquid_mentions("gDNA std curve")] == ["gDNA std 20 ng/uL"]


def test_a_run_of_a_name_that_stops_at_its_number_is_no_name() -> None:
    lex = Lexicon(_lab("c6_quant"))
    found = lex.liquid_mentions("BSA 2-fold down brad_96 column 1")
    assert [(m.name, m.written) for m in found] == [("Pierce BSA 2 mg/mL", "BSA")]


def test_standards_named_in_a_plate_map_aside_stay_in_their_sentence() -> None:
    text = normalise(
        "dye 2-fold in buffer, plate_1 column 6 (A6 = S1 ... H6 = S8), 80 uL each"
    ).text
    assert ";" not in text
    assert normalise("rows A-G, 100 uL, H = blank").text.endswith("row H = blank")


def test_a_range_then_a_well_said_blank_is_the_points_then_the_blank() -> None:
    ents = extract("2-fold, A3-G3 + H3 blank", Lexicon(_lab("standard")), ())
    split_blanks(ents)
    assert [w.text for w in ents.wellsets] == ["A3-G3"]
    assert [w for b in ents.blanks for w in b.expand(8, 12)] == ["H3"]
    ents = extract("2-fold, G1 + H1 blanks", Lexicon(_lab("standard")), ())
    split_blanks(ents)
    assert [w for b in ents.blanks for w in b.expand(8, 12)] == ["G1", "H1"]


def test_no_blank_is_no_blank() -> None:
    from agents.task.planning.families._blank_wells import tail_blanks

    assert tail_blanks("A1 to H1, 100 uL per well, no blank") == 0
    assert tail_blanks("7 points plus a blank") == 1


def test_a_bracket_that_says_where_the_curve_runs_keeps_its_wells() -> None:
    ents = extract("curve on plate_1 (column 1, A to H, H blank)", Lexicon(_lab("standard")), ())
    assert any("column 1" in w.text for w in ents.wellsets)


def test_a_curve_said_x3_is_in_triplicate() -> None:
    from agents.task.planning._quantities import replicates

    assert replicates("Std curve x3: BSA 1:2 in PBS") == 3
    assert replicates("mix x3") is None


def test_the_top_standard_after_a_comma_is_no_top_up() -> None:
    from agents.task.planning._clauses import split

    text = "standards: bca_plate A12 to H12, top BSA 2 mg/mL, 1:3 in PBS, H12 blank, 240 uL final"
    said = split(normalise(text), frozenset({"bca_plate"}))
    assert not any(c.text.lower().startswith("top") for c in said)
    said = split(normalise("100 uL dye into A1, top them up to 200 uL with buffer"), frozenset())
    assert said[-1].text.startswith("top them up")
