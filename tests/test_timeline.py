"""The timeline: which steps depend on which, from what each step uses, and when each runs.

Pure: each step is given as what the simulation says it uses (its instrument, labware, the
places and instruments a plate move reaches, its estimated seconds).
"""

from __future__ import annotations

import io

from rich.console import Console

from agents.task.timeline import Use, dependencies, timeline
from labwright.cli._timeline import show_timeline

PIPETTE_1 = Use("s1", "lh1", 40.0, ("plate_1", "reservoir", "tips_1"))
MOVE_1 = Use(
    "s2", "arm1", 16.0, ("plate_1",), ("hs1:holder", "lh1:plate_carrier:1"), ("hs1", "lh1")
)
SHAKE_1 = Use("s3", "hs1", 300.0, ("plate_1",))
PIPETTE_2 = Use("s4", "lh1", 40.0, ("plate_2", "reservoir", "tips_1"))
READ_2 = Use("s5", "reader1", 20.0, ("plate_2",))
BARS = ("lh1", "hs1", "arm", "rea")


def test_a_reading_waits_for_the_pipetting_into_its_plate_and_nothing_else() -> None:
    deps = dependencies([PIPETTE_1, PIPETTE_2, READ_2])
    assert deps["s5"] == ["s4"]  # reader1's first step, after plate_2 was filled
    assert deps["s4"] == ["s1"]  # the same liquid handler (and reservoir, tips)


def test_a_plate_move_comes_after_the_uses_at_its_origin_and_before_those_at_its_destination() -> (
    None
):
    deps = dependencies([PIPETTE_1, MOVE_1, SHAKE_1])
    assert deps["s2"] == ["s1"]
    assert deps["s3"] == ["s2"]


def test_a_plate_move_reaches_into_both_instruments_which_are_idle_meanwhile() -> None:
    # plate_2's pipetting on lh1 waits for the arm to have left lh1's deck.
    deps = dependencies([PIPETTE_1, MOVE_1, PIPETTE_2])
    assert set(deps["s4"]) == {"s1", "s2"}


def test_steps_that_share_nothing_start_together_and_the_makespan_is_the_critical_path() -> None:
    line = timeline([PIPETTE_1, MOVE_1, SHAKE_1, PIPETTE_2, READ_2])
    at = {s.step: (s.start_s, s.end_s) for s in line.steps}
    assert at["s4"] == (56.0, 96.0)  # while plate_1 shakes (56 .. 356)
    assert at["s5"] == (96.0, 116.0)
    assert line.critical_path == ["s1", "s2", "s3"]
    assert line.critical_path_s == line.makespan_s == 356.0
    assert line.sequential_s == 416.0


def test_a_sequential_timeline_is_one_chain_in_plan_order() -> None:
    line = timeline([PIPETTE_1, MOVE_1, SHAKE_1, PIPETTE_2, READ_2], sequential=True)
    assert [s.after for s in line.steps] == [[], ["s1"], ["s2"], ["s3"], ["s4"]]
    assert line.makespan_s == line.sequential_s == line.critical_path_s == 416.0


def test_a_window_starts_when_the_one_before_has_ended() -> None:
    # Windows of three: plate_2's pipetting (the second window) waits for the shake.
    line = timeline([PIPETTE_1, MOVE_1, SHAKE_1, PIPETTE_2, READ_2], window=3)
    at = {s.step: s.start_s for s in line.steps}
    assert at["s4"] == 356.0
    assert line.makespan_s == 416.0 > line.critical_path_s


def test_the_timeline_prints_within_80_columns_with_every_step_s_start_and_end() -> None:
    line = timeline([PIPETTE_1, MOVE_1, SHAKE_1, PIPETTE_2, READ_2]).model_dump(mode="json")
    console = Console(width=80, record=True, file=io.StringIO())
    show_timeline(console, line)
    text = console.export_text()
    assert all(len(row) <= 80 for row in text.splitlines())
    flat = " ".join(text.split())  # the sentence may wrap
    assert "critical path 5.9 min" in flat and "one step after another: 6.9 min" in flat
    assert "s4" in text and "0:56" in text and "1:36" in text  # s4 starts and ends
    bars = {row.split()[0]: row.split()[1] for row in text.splitlines() if row[:3] in BARS}
    assert all("#" in bars[i] for i in ("lh1", "arm1", "hs1"))  # on the critical path
    assert "#" not in bars["reader1"] and "=" in bars["reader1"]  # off it
