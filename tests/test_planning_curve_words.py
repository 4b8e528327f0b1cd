"""Pure-text stages a standard curve leans on: role words, lead-in diluents, series lists."""

from agents.task.planning._liquid_names import role_labels
from agents.task.planning._normalise import normalise
from agents.task.planning._phrasings import rephrase
from agents.task.planning._series import series
from agents.task.planning._using_first import using_after
from agents.task.planning._well_aliases import named_wells


def test_a_diluent_role_said_before_its_liquid_is_no_liquid_of_its_own() -> None:
    text = "2x serial, diluent 1x PBS"
    a, b = text.index("diluent"), text.index("1x PBS")
    assert role_labels([(a, a + 7), (b, b + 6)], text) == {0}


def test_a_liquid_named_after_another_keeps_both() -> None:
    text = "BSA std in PBS"
    assert role_labels([(0, 7), (11, 14)], text) == set()


def test_a_diluent_said_before_a_dilution_moves_to_its_end() -> None:
    out = using_after("Using Assay Buffer, make a 2-fold series of X in A1-H1, 100 uL final.")
    assert out.startswith("make a 2-fold series")
    assert out.rstrip(".").endswith("using Assay Buffer")


def test_a_tool_said_before_the_work_stays_where_it_is() -> None:
    text = "Using the 8-channel, make a 2-fold series of X across row A"
    assert using_after(text) == text


def test_leave_in_each_is_a_series_final_volume() -> None:
    assert "100 uL final" in rephrase("2-fold serial of X in Y, A1-A8, leave 100 uL in each")


def test_a_series_read_past_the_column_number_before_it() -> None:
    found = series("elisa_p1 column 1, 4000, 2000, 1000, 500 pg/mL and 0 in A1-E1", 2.0)
    assert found is not None and found.points == 4 and found.blanks == 1


def test_wells_named_by_the_request_are_written_as_wells() -> None:
    out = named_wells("Label wells A1-G1 of p1 as S1-S7. Add 100 uL X to S2-S7 and 200 uL Y to S1.")
    assert "S2" not in out and "p1 B1-G1" in out and out.endswith("to A1.")


def test_names_that_do_not_fit_their_wells_are_left_alone() -> None:
    text = "Label wells A1-G1 as S1-S5. Add 100 uL X to S2."
    assert named_wells(text) == text


def test_numbered_steps_on_one_line_become_lines() -> None:
    out = normalise("Std curve: 1. 100 uL X into A2-A8. 2. 200 uL Y into A1.").text
    assert len(out.splitlines()) >= 3
