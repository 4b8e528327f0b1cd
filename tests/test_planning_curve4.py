"""Stages of the rule planner as standard curves from other benches exercise them: blanks
named by what they hold, ratios and counts after a column, spans of rows said with "down"."""

from __future__ import annotations

from test_rule_planner import LAB

from agents.task.planning._blanks import blank_note, split_blanks
from agents.task.planning._entities import extract
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._quantities import fold, steps
from agents.task.planning._series import series
from agents.task.planning._wellsets import find_all
from agents.task.planning.families._concentrations import top_and_stock


def _wells(text: str) -> list[str]:
    return [w for s in find_all(text) for w in s.expand(8, 12)]


def test_a_blank_named_by_what_it_holds_is_a_blank_note() -> None:
    lex = Lexicon(LAB)
    assert blank_note(extract("H1 = buffer blank", lex, ()))
    assert blank_note(extract("H2 stays buffer only", lex, ()))
    assert blank_note(extract("G1 and H1 NTC", lex, ()))
    assert not blank_note(extract("H1 = buffer", lex, ()))


def test_a_bracketed_blank_after_a_well_takes_that_well_out_of_the_dilution() -> None:
    lex = Lexicon(LAB)
    ents = extract(
        "dye 2-fold down plate_1 column 1 in buffer, H1 (blank) gets buffer only", lex, ()
    )
    split_blanks(ents)
    assert [w for b in ents.blanks for w in b.expand(8, 12)] == ["H1"]


def test_a_ratio_or_a_count_after_a_column_is_never_another_column() -> None:
    assert _wells("column 4, 1:2 in ###") == [f"{r}4" for r in "ABCDEFGH"]
    assert _wells("col 3, 1 in 3 down") == [f"{r}3" for r in "ABCDEFGH"]
    assert _wells("column 1, 8 pts incl blank") == [f"{r}1" for r in "ABCDEFGH"]
    assert set(_wells("columns 4, 1 and 2")) == {f"{r}{c}" for r in "ABCDEFGH" for c in (1, 2, 4)}


def test_rows_said_with_down_to_are_one_span() -> None:
    assert _wells("from row A down to row G") == [
        f"{r}{c}" for r in "ABCDEFG" for c in range(1, 13)
    ]


def test_a_fraction_before_steps_is_a_ratio_and_a_plate_format_is_no_count() -> None:
    assert fold("IL-6 standard, 1/2 steps") == (2.0, "ratio")
    assert steps("384 std curve: master mix 1:2 down column 3") is None
    assert steps("diluted 1:2 six times across row C") == 6
    assert steps("mix 5 times") is None


def test_control_and_blank_shorthand_are_blank_notes() -> None:
    lex = Lexicon(LAB)
    assert blank_note(extract("A11 growth ctrl, A12 sterility ctrl", lex, ()))
    assert blank_note(extract("B8 blk", lex, ()))


def test_a_series_said_with_slashes_is_read_by_its_concentrations() -> None:
    found = series("Standards (ug/mL): 1000 / 500 / 250 / 125 / 62.5 / 31.25 / 0")
    assert found is not None and (found.fold, found.points, found.blanks) == (2.0, 6, 1)


def test_a_series_top_is_compared_with_the_strength_the_stock_s_name_says() -> None:
    said = top_and_stock("1000 / 500 / 250 ug/mL, ##### diluted", "1000", "BSA 2 mg/mL")
    assert said is not None and said[0].value * 2 == said[1].value
    assert top_and_stock("1000 / 500 / 250 nM", "1000", "BSA 2 mg/mL") is None
