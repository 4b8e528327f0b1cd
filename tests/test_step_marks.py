"""Notebook shorthand between steps: an arrow before the next step's verb is "then", a shake's
settings in brackets are one setting, a minute mark after a timed verb is minutes; an arrow
between places stays a chain."""

from __future__ import annotations

import pytest

from agents.task.planning._step_marks import step_marks


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("50 uL dye -> plate_1 row A -> shake 2 min", "plate_1 row A, then shake 2 min"),
        ("add dye -> read A600", "add dye, then read A600"),
        ("add dye -> OD600 read", "add dye, then OD600 read"),
        ("add dye -> 5 min shake at 500 rpm", "add dye, then 5 min shake"),
        ("mix on the shaker (600 rpm, 5 min)", "mix on the shaker at 600 rpm for 5 min"),
        ("shake (5 min, 600 rpm)", "shake at 600 rpm for 5 min"),
        ("shake 5' at 300 rpm", "shake 5 min at 300 rpm"),
        ("incubate 10′", "incubate 10 min"),
    ],
)
def test_shorthand_is_read_as_the_words_it_stands_for(text: str, said: str) -> None:
    assert said in step_marks(text)


@pytest.mark.parametrize(
    "text",
    [
        "A1 -> A2 -> A3 on plate_1, 50 uL",  # a chain of wells
        "50 uL dye -> plate_1 row A",  # a place
        "add 'dye' to A1",  # quotes, not minutes
        "shake plate_1 at 37 C, 250 rpm, 4 hours",  # a speed among settings, no step
    ],
)
def test_places_and_settings_are_left_alone(text: str) -> None:
    assert step_marks(text) == text
