"""The pieces of a serial dilution said apart from its sentence: the diluent and final volume
in the next sentence, the fold under a heading that names the titration, and the stock's wells
named beside it without a plate."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents.task.planning._clauses import split
from agents.task.planning._entities import extract
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import normalise
from agents.task.planning._pieces import _merge_fragments
from agents.task.planning._reading import _read
from evals.planning import Labs

LABS = Labs()


def _families(request: str, lab: str = "standard") -> list[str | None]:
    """The family of each frame once the dilution's pieces are joined to it."""
    lex = Lexicon(LABS[lab].view)
    norm = normalise(request)
    clauses = split(replace(norm), frozenset(lex.labware))
    read_in = _merge_fragments([_read(c, lex, norm.quoted) for c in clauses], lex, norm)
    return [fam.name if fam else None for _, fam in read_in]


@pytest.mark.parametrize(
    "request_text",
    [
        "2-fold serial dilution of dye across plate_1 row A, A1 to A8. Buffer as diluent, "
        "100 uL final in every well.",
        "2-fold serial dilution of dye across plate_1 row A, A1 to A8. Buffer is the diluent; "
        "100 uL final per well.",
        "Titrate dye along row B of plate_1: 3-fold, B1 to B6, 120 uL final per well, buffer "
        "as diluent.",
    ],
)
def test_a_dilutions_roles_and_final_volume_said_apart_join_it(request_text: str) -> None:
    assert _families(request_text) == ["dilution"]


def test_a_next_sentence_that_fills_wells_of_its_own_stays_a_step() -> None:
    request = (
        "2-fold serial dilution of dye across plate_1 row A, A1 to A8. Add 50 uL buffer to B1."
    )
    assert len(_families(request)) == 2


def test_a_number_that_numbers_a_column_is_no_count_of_a_liquid() -> None:
    lex = Lexicon(LABS["r5s_mic"].view)
    ents = extract("dilute the column 1 inoculum across mic_B", lex, ())
    assert [m.name for m in ents.liquids] == ["E. coli inoculum"]
