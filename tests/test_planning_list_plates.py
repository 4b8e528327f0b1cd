"""Per-well lists whose plates are named once: the stages that read them (r5l)."""

from __future__ import annotations

from agents.task.planning._clauses import split
from agents.task.planning._list_heads import opens_a_list
from agents.task.planning._markdown import unwrapped
from agents.task.planning._normalise import normalise
from agents.task.planning._wellsets import find_all

NAMES = frozenset({"mp07", "conf384", "dil_96"})


def test_a_line_naming_two_plates_heads_the_pairs_under_it_without_a_colon() -> None:
    assert opens_a_list("strain picks mp07 -> conf384", ["A1 -> D5 15 uL"], NAMES)
    assert opens_a_list("hits from mp07 into dil_96 (30 uL each)", ["1. D4 to A1"], NAMES)


def test_a_line_with_its_own_wells_or_volume_heads_nothing() -> None:
    assert not opens_a_list("move 20 uL mp07 A1 -> conf384 B1", ["A2 -> B2 5 uL"], NAMES)
    assert not opens_a_list("add 20 uL buffer to conf384", ["A2 -> B2 5 uL"], NAMES)
    assert not opens_a_list("shake the plate", ["A2 -> B2 5 uL"], NAMES)


def test_pair_items_under_a_colonless_heading_take_its_plates_as_their_label() -> None:
    clauses = split(normalise("picks mp07 -> conf384\nB3 -> A1 5 uL\nE7 -> A2 5 uL"), NAMES)
    assert clauses[0].heading
    assert [c.label for c in clauses[1:]] == ["picks mp07 -> conf384"] * 2


def test_a_bare_adjective_before_a_word_is_not_the_whole_plate() -> None:
    assert not find_all("Hits for full kinetics")
    assert not find_all("Whole-cell actives")
    assert [w.text for w in find_all("fill the whole plate")] == ["the whole plate"]


def test_volumes_listed_with_the_unit_once_at_the_end_each_get_it() -> None:
    text = normalise("assay buffer H1 70 / H2 55 / H3 40 uL").text
    assert text == "assay buffer H1 70 uL / H2 55 uL / H3 40 uL"


def test_a_line_broken_after_a_preposition_joins_the_next() -> None:
    assert unwrapped("First the product from\npcr_cleanup, then water") == (
        "First the product from pcr_cleanup, then water"
    )
    assert unwrapped("Add water to\n- A1\n- A2") == "Add water to\n- A1\n- A2"


def test_a_pair_after_a_volume_is_not_joined_to_the_well_before_it() -> None:
    sets = find_all("lysate # A1 ##### -> H1, A2 ##### -> H2")
    assert [s.text for s in sets] == ["A1", "H1", "A2", "H2"]
