"""Close misspellings of a lab liquid's name: read as that liquid only when it is the one
liquid that close (two as close are asked about)."""

from __future__ import annotations

from agents.task.planning._liquid_names import misspelt


def test_an_acronym_with_two_letters_swapped_is_the_one_liquid_with_those_letters() -> None:
    assert misspelt("psb", ["pbs", "dmso"], {}) == "pbs"


def test_a_swapped_acronym_may_be_the_word_that_names_a_longer_liquid() -> None:
    assert misspelt("psb", ["sterile_pbs"], {"pbs": "sterile PBS"}) == "sterile PBS"


def test_a_swapped_acronym_matching_two_liquids_is_not_read_as_either() -> None:
    assert misspelt("psb", ["pbs", "spb"], {}) is None


def test_a_typo_of_the_word_naming_one_multi_word_liquid_is_that_liquid() -> None:
    assert misspelt("watr", ["milli-q_water"], {"water": "milli-Q water"}) == "milli-Q water"


def test_a_typo_as_close_to_words_of_two_liquids_is_not_read_as_either() -> None:
    words = {"water": "milli-Q water", "wafer": "wafer wash"}
    assert misspelt("water", [], words) is None  # exact words are read elsewhere
    assert misspelt("watr", [], words) == "milli-Q water"
    assert misspelt("wafr", [], {"water": "milli-Q water", "wafer": "wafer wash"}) == "wafer wash"
    assert misspelt("waer", [], words) is None


def test_a_wrong_first_letter_is_no_typo() -> None:
    assert misspelt("hater", [], {"water": "milli-Q water"}) is None
