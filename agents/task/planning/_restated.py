"""One set of wells said twice: "I1-I12 (the bottom row)", "A1-H1, i.e. column 1".

The restatement is a remark about the wells, never a second set and never a correction: when
the two name different wells the person is asked which they meant, and a well the plate lacks
in either is refused (:meth:`WellSet.expand` expands both). One may narrow the other ("row A
(A1-A4)", "the wells A1-A4 (row A)"): then the narrower is what was meant.
"""

from __future__ import annotations

from agents.task.planning._outcomes import Ask
from agents.task.planning._wellgrid import _expand
from agents.task.planning._wellpatterns import Part
from agents.task.planning._wellsets import WellSet


def agreed(wells: WellSet, rows: int, cols: int) -> list[str]:
    """The wells of ``wells`` on a rows x cols plate; Ask when it and its restatement differ."""
    if any(p.kind == "other" and p.args[0] is None for p in wells.parts):
        raise Ask(  # "every other one" with no rows or columns before it to count
            "Every other column or every other row?",
            ["wells"],
            ["every other column", "every other row"],
        )
    names = wells.expand(rows, cols)
    if wells.restates is None:
        return names
    other = wells.restates.expand(rows, cols)
    for reading in (other, *_other_phase(wells.restates, rows, cols)):
        if set(names) <= set(reading):
            return names
        if set(reading) <= set(names):
            return reading
    raise Ask(
        f"'{wells.restates.text}' is {_span(other)} but '{wells.text}' is {_span(names)} on "
        "this plate: which wells did you mean?",
        ["wells"],
        [_span(other), _span(names)],
    )


def _other_phase(wells: WellSet, rows: int, cols: int) -> list[list[str]]:
    """'every other well of row C' with no start: C2, C4 ... is as right as C1, C3 ..."""
    if not any(p.kind == "alternate" and p.args[1:] in ((None,), (None, 2)) for p in wells.parts):
        return []
    parts = tuple(
        Part("alternate", (p.args[0], "even")) if p.kind == "alternate" else p for p in wells.parts
    )
    return [[w for part in parts for w in _expand(part, rows, cols)]]


def _span(names: list[str]) -> str:
    return f"{names[0]}..{names[-1]}" if len(names) > 2 else ", ".join(names)
