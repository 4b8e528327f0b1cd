"""Several volumes in one transfer: peers that are not one per well are asked about; a volume
with another role (what a well holds, a level, a labware size) never makes it ask."""

from __future__ import annotations

import pytest

from agents.task.planning._clauses import split
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import normalise
from agents.task.planning._outcomes import Ask
from agents.task.planning._reading import _read
from agents.task.planning.families import _asks as asks
from evals.planning import Labs

LABS = Labs()


def _frame(request: str):
    view = LABS["standard"].view
    lex, norm = Lexicon(view), normalise(request)
    frames = [_read(c, lex, norm.quoted)[0] for c in split(norm, frozenset(lex.labware))]
    return frames[0]


@pytest.mark.parametrize(
    "request_",
    [
        "add 10, 20 uL buffer to plate_1 A1, A2, A3",  # a list sharing one unit
        "add 10/20 uL buffer to plate_1 A1, A2, A3",
        "add 10 or 20 uL buffer to plate_1 A1, A2, A3",
        "buffer to plate_1 A1-A3 (50 uL) and A4-A6 (100 uL)",  # one in brackets per set
    ],
)
def test_peer_volumes_that_are_not_one_per_well_are_asked_about(request_: str) -> None:
    with pytest.raises(Ask) as asked:
        asks.unmatched_list(_frame(request_), 6)
    assert asked.value.missing == ["volume"]


@pytest.mark.parametrize(
    "request_",
    [
        "transfer 20 uL dye into 180 uL buffer in plate_1 B1-H1",  # what the wells hold
        "add 100 uL buffer to the wells of plate_1 A1-A4 holding 50 uL",
        "add 50 uL buffer to plate_1 A1-A4, 200 uL final",  # a level
        "add 50 uL buffer to plate_1 A1-A4, final volume 200 uL",
        "add 50 uL buffer to plate_1 A1-A4 leaving 20 uL",
    ],
)
def test_a_volume_with_another_role_is_not_a_peer(request_: str) -> None:
    asks.unmatched_list(_frame(request_), 4)  # raises nothing
