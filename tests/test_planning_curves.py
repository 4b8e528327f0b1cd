"""Standard curves, normalisation tables, top-ups and media exchange: the stages that read them."""

from __future__ import annotations

from test_rule_planner import make_lab

from agents.task.planning._clauses import split
from agents.task.planning._headings import said_first
from agents.task.planning._labels import diluent_of
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import normalise

_LAB = make_lab(liquids={"A1": ("dye", 10000), "A2": ("buffer", 12000)})


def test_a_plus_after_a_well_is_the_volume_added_to_it() -> None:
    text = normalise("buffer per well: plate_1 A1 +30, B1 +45 (uL)").text
    assert "A1 30 uL, B1 45 uL" in text


def test_a_normalising_heading_dilutes_with_the_liquid_after_with() -> None:
    text = "normalise the dye to 5 ng/uL with buffer"
    found = diluent_of(text, Lexicon(_LAB).liquid_mentions(text))
    assert found is not None and found.name == "buffer"


def test_of_two_liquids_a_normalising_heading_dilutes_with_the_one_not_its_object() -> None:
    text = "Normalise the dye, buffer per well"
    found = diluent_of(text, Lexicon(_LAB).liquid_mentions(text))
    assert found is not None and found.name == "buffer"


def test_a_heading_that_does_not_dilute_names_no_diluent() -> None:
    text = "add dye with buffer"
    assert diluent_of(text, Lexicon(_LAB).liquid_mentions(text)) is None


def test_a_spaced_slash_list_of_volumes_is_a_list() -> None:
    assert "100, 50, 25 and 12.5 uL" in normalise("dye 100 / 50 / 25 / 12.5 uL into A1-D1").text
    assert "100 and 50 uL" in normalise("dye 100 / 50 uL into A1-B1").text


def test_a_recipe_row_keeps_its_slashed_volumes() -> None:
    assert "10 / 40 uL" in normalise("dye then buffer:\nA1  10 / 40 uL").text


def test_a_liquid_is_said_first_only_by_its_own_words() -> None:
    text = "Compound stocks from the same wells of src first, DMSO last"
    assert said_first(text, text.index("DMSO"), text.index("DMSO") + 4) is False
    text = "Normalise to 200 uL each. CAMHB first, then culture"
    assert said_first(text, text.index("CAMHB"), text.index("CAMHB") + 5) is True


def test_a_heading_with_a_total_and_a_bare_list_after_it_stay_whole() -> None:
    request = "stds in plate_1 column 1, 200 uL total each: dye 100, 50, 25 and 12.5 uL in A1-D1"
    said = [c.text for c in split(normalise(request))]
    assert said == [
        "stds in plate_1 column 1, 200 uL total each",
        "dye 100, 50, 25 and 12.5 uL in A1-D1",
    ]


def test_the_next_step_written_out_after_a_mix_is_a_clause_of_its_own() -> None:
    said = [c.text for c in split(normalise("200 uL A1 into B1, mix, B1 into C1, and so on to G1"))]
    assert said[-1] == "B1 into C1, and so on to G1"
