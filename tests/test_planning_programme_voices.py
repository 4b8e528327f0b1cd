"""Thermocycling programmes written the way people write them: the stages the profile reader
makes of primes, a step said 'after', a count told on its own line, and the normalised text."""

from __future__ import annotations

import pytest

from agents.task.planning._normalise import normalise
from agents.task.planning.families import _profile as prof


def _stages(text: str) -> list[tuple[int, list[tuple[float, float]]]]:
    return [(st.repeats, st.steps) for st in prof.parse(text).stages]


def test_primes_after_a_bare_temperature_are_minutes_and_seconds() -> None:
    text = normalise("run 94 for 3', then 35X (94 30\", 55 30\", 72 1'), 72 for 7'").text
    assert _stages(text) == [
        (1, [(94.0, 180.0)]),
        (35, [(94.0, 30.0), (55.0, 30.0), (72.0, 60.0)]),
        (1, [(72.0, 420.0)]),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "40x: 95 C 15 s, 60 C 60 s (after 95 C 10 min)",
        "40x: 95 C 15 s, 60 C 60 s, after 10 min at 95 C",
        "30 times between 95 C for 15 s and 60 C for 60 s after a 95 C 10 min hot start",
    ],
)
def test_a_step_said_after_the_cycles_with_after_runs_first(text: str) -> None:
    stages = _stages(text)
    assert stages[0] == (1, [(95.0, 600.0)])
    assert stages[1][0] > 1


def test_a_count_on_its_own_line_repeats_the_parts_told_one_a_line_before_it() -> None:
    text = "95 C 3 min\n95 C 30 s\n55 C 30 s\n72 C 1 min\nCycles: 30\n72 C 10 min"
    assert _stages(text) == [
        (1, [(95.0, 180.0)]),
        (30, [(95.0, 30.0), (55.0, 30.0), (72.0, 60.0)]),
        (1, [(72.0, 600.0)]),
    ]


def test_a_count_after_a_bracket_still_repeats_only_the_bracket() -> None:
    assert _stages("98 C 30 s, (98 C 10 s, 60 C 30 s) x 30, 72 C 2 min") == [
        (1, [(98.0, 30.0)]),
        (30, [(98.0, 10.0), (60.0, 30.0)]),
        (1, [(72.0, 120.0)]),
    ]


def test_cyc_is_cycles_and_a_time_said_first_follows_its_temperature() -> None:
    assert "35 cycles" in normalise("PCR 35 cyc 95/15s").text
    assert "95 C 5 min hot start" in normalise("after a 5 minute 95 C hot start").text
