"""Columns, channels and tips as people say them: layouts said by what they leave out, tip
wishes, copies said as a noun, and replicates laid side by side. Each rule is also tried
against what must not trigger it."""

from __future__ import annotations

import pytest

from agents.task.planning._clauses import split
from agents.task.planning._entities import how_said
from agents.task.planning._normalise import normalise
from agents.task.planning._wellsets import find_all


def _wells(text: str) -> list[list[str]]:
    return [ws.expand(8, 12) for ws in find_all(text)]


def _columns(*numbers: int) -> list[str]:
    return [f"{r}{c}" for r in "ABCDEFGH" for c in numbers]


@pytest.mark.parametrize(
    ("text", "columns"),
    [
        ("all but the last column of #", range(1, 12)),
        ("all columns except the last", range(1, 12)),
        ("all columns but the first two", range(3, 13)),
        ("all but the last two columns of #", range(1, 11)),
        ("all columns except 6 and 7 of #", [*range(1, 6), *range(8, 13)]),
        ("all but column 12 of #", range(1, 12)),
    ],
)
def test_a_plate_said_by_the_columns_it_leaves_out_is_the_rest(
    text: str, columns: range | list[int]
) -> None:
    assert _wells(text) == [_columns(*columns)]


def test_rows_said_by_what_they_leave_out_are_the_rest() -> None:
    assert _wells("all rows but H") == [[f"{r}{c}" for r in "ABCDEFG" for c in range(1, 13)]]
    assert _wells("all rows but the bottom one") == _wells("all rows but H")


def test_the_wells_off_the_edges_are_the_inner_sixty() -> None:
    inner = _wells("the inner 60 wells")
    assert len(inner[0]) == 60
    assert _wells("all wells, except the edges") == inner
    assert _wells("every well except the outer ones") == inner


def test_an_exception_not_understood_leaves_no_wells_rather_than_all_of_them() -> None:
    assert _wells("all but the last of #") == []
    assert _wells("all columns except A") == []


@pytest.mark.parametrize(
    ("said", "policy"),
    [
        ("discard tips after each column", "per_column"),
        ("tip changes between columns", "per_column"),
        ("eject the tips between columns", "per_column"),
        ("tips: reuse", "once"),
        ("reusing the tips", "once"),
        ("tip reuse OK", "once"),
        ("keep tips between columns", "once"),
        ("8 tips for the whole thing", "once"),
        ("do not re-use tips", "per_destination"),
        ("change tips between wells", "per_destination"),
        ("add 20 uL to column 1", None),
    ],
)
def test_tip_wishes_said_many_ways_become_one_policy(said: str, policy: str | None) -> None:
    assert how_said(said)[1] == policy


@pytest.mark.parametrize(
    "request_text",
    [
        "Make me a replicate plate of samples on dest_plate",
        "make a replica of samples onto dest_plate",
        "Create a daughter plate from samples in dest_plate",
        "Prepare a copy plate of samples on dest_plate",
    ],
)
def test_a_copy_said_as_a_noun_is_read_as_the_verb(request_text: str) -> None:
    (clause,) = split(normalise(request_text))
    assert clause.text.startswith("replicate samples ")
    assert clause.said == request_text  # the trace shows what was written


def test_making_something_else_is_not_a_copy() -> None:
    (clause,) = split(normalise("make a 2-fold dilution of dye across row A of plate_1"))
    assert clause.text.startswith("make a 2-fold dilution")
