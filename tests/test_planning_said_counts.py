"""A PCR programme's count said apart from its steps ("a 35-cycle PCR: ...", "PCR (35 cycles)
on ...", "cycles: 35") repeats the one part of several steps; with two such parts, or no count
at all, it is asked. Times and holds in shorthand ("1'30", "95 for 2 min", "4C-inf", "then 4.")
read as the block runs them."""

from __future__ import annotations

from agents.task.planning._normalise import normalise
from agents.task.planning._programme_tables import count_blocks, programme_tables
from agents.task.planning.families import _profile as prof

_PCR = "95 C 3 min, then 95 C 15 s, 60 C 30 s, 72 C 1 min, then 72 C 5 min"


def _repeats(text: str) -> list[int]:
    return [st.repeats for st in prof.parse(text).stages]


def test_a_count_said_in_the_lead_repeats_the_one_part_of_several_steps() -> None:
    assert _repeats(f"Run a 35-cycle PCR: {_PCR}") == [1, 35, 1]
    assert _repeats(f"PCR (cycles: 35): {_PCR}") == [1, 35, 1]


def test_no_count_or_two_parts_of_several_steps_leave_the_count_asked() -> None:
    assert prof.parse(f"Run a PCR: {_PCR}").vague == "no number of cycles"
    two = "Run a 35-cycle PCR: 95 C 15 s, 60 C 30 s, then 72 C 1 min, 55 C 30 s"
    assert prof.parse(two).vague == "no number of cycles"


def test_shorthand_times_and_holds_read_as_the_block_runs_them() -> None:
    assert "90 s" in normalise("95 C for 1'30").text
    assert prof.hold_of("72C-2min; 4C-inf") == 4.0
    steps = prof.steps("95 for 2 min, 35 cycles of 95 for 20 s", programme=True)
    assert [(c, s) for *_, c, s in steps] == [(95.0, 120.0), (95.0, 20.0)]


def test_indented_steps_under_a_count_line_are_the_cycled_steps() -> None:
    said = "95 C 3 min\nCycling (x35):\n  95 C 15 s\n  60 C 30 s\n  72 C 1 min\nFinal 72 C 5 min"
    assert "35 cycles of 95 C 15 s, 60 C 30 s, 72 C 1 min" in count_blocks(said)
    assert (
        count_blocks("35 cycles of\n95 C 15 s\n60 C 30 s") == "35 cycles of\n95 C 15 s\n60 C 30 s"
    )


def test_a_blank_count_under_a_cycled_row_of_a_table_is_that_stage() -> None:
    table = "Step | Temp | Time | Cycles\nDenature | 98 C | 10 s | 30\nAnneal | 60 C | 20 s |\n"
    assert "30 cycles of 98 C 10 s, 60 C 20 s" in programme_tables(
        table + "Final | 72 C | 2 min | 1"
    )
