"""More destinations than sources on one line: the planner asks which wells each source goes
into, and never repeats the sources down the line; copies beside the line still pair."""

from __future__ import annotations

import pytest

from agents.task.planning._outcomes import Ask
from agents.task.planning.families._pairing import pair


@pytest.mark.parametrize(
    ("src", "dst"),
    [
        (["A1", "B1", "C1"], ["A1", "B1", "C1", "D1", "E1", "F1"]),  # a column down a column
        (["A1", "A2", "A3"], ["A1", "A2", "A3", "A4", "A5", "A6"]),  # a row along a row
    ],
)
def test_sources_are_never_repeated_down_their_own_line(src: list[str], dst: list[str]) -> None:
    with pytest.raises(Ask) as asked:
        pair(src, dst)
    assert asked.value.missing == ["destination"]


def test_a_column_into_neighbouring_columns_still_pairs_by_row() -> None:
    moves = pair(["A1", "B1"], ["A1", "B1", "A2", "B2"])
    assert sorted(moves) == [("A1", "A1"), ("A1", "A2"), ("B1", "B1"), ("B1", "B2")]


def test_one_source_into_a_line_is_still_a_distribution() -> None:
    assert pair(["A1"], ["A1", "A2", "A3"]) == [("A1", "A1"), ("A1", "A2"), ("A1", "A3")]
