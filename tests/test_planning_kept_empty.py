"""Wells said to stay empty are never filled: the planner asks which is meant."""

from __future__ import annotations

from agents.task.planning._kept_empty import kept_empty


def test_keep_leave_and_do_not_touch_name_the_wells_kept_empty() -> None:
    assert kept_empty("add buffer to A1-A6 and keep A1 empty") == ["A1"]
    assert kept_empty("column 1 but do not touch B1 and C1") == ["B1", "C1"]
    assert kept_empty("B3 must stay empty") == ["B3"]


def test_an_empty_well_that_is_not_kept_names_nothing() -> None:
    assert kept_empty("fill the empty wells A1-A6 with buffer") == []


def test_a_well_said_to_be_empty_now_is_a_fact_not_a_wish() -> None:
    assert kept_empty("plate_1 A1 is empty. Add 50 uL dye to it.") == []
