"""Standard curves, normalisation tables, top-ups and media exchange: the stages that read them."""

from __future__ import annotations

from test_rule_planner import make_lab

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
