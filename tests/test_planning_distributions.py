"""Distributions and stamps as people write them: a liquid and its wells with no verb and no
volume, genus initials ("E. coli"), lab verbs one edit from a keyword ("inoculate"), remarks in
brackets about wells already named ("A1-A12 (A12 = sterility control)")."""

from __future__ import annotations

import pytest

from agents.task.planning._clauses import split
from agents.task.planning._entities import extract
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import normalise
from agents.task.planning._spelling import keywords
from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


def _plan(request: str, lab: str) -> Plan | Clarification:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan | Clarification), result
    return result


@pytest.mark.parametrize(
    ("request_text", "lab"),
    [
        ("CAMHB into B1-B12 of MIC_P1 please", "b2_micro"),
        ("S. aureus inoculum -> MIC_P1 C1-C11", "b2_micro"),
        ("ethanol into clean_dw B1-B12", "b2_plant"),
        ("backfill DMSO into ARP_384_01 A1-A24", "b2_cmpd"),
        ("buffer to row A of plate_1 please", "standard"),
    ],
)
def test_a_liquid_into_wells_without_a_volume_asks_for_the_volume(
    request_text: str, lab: str
) -> None:
    result = _plan(request_text, lab)
    assert isinstance(result, Clarification)
    assert result.missing == ["volume"]


def test_a_genus_initial_starts_no_lettered_item_and_ends_no_sentence() -> None:
    texts = [c.text for c in split(normalise("E. coli inoculum into A1-A11, then mix A1"))]
    assert texts == ["E. coli inoculum into A1-A11", "mix A1"]
    assert [c.text for c in split(normalise("a. add 5 uL to A1\nb. mix A1"))] == [
        "add 5 uL to A1",
        "mix A1",
    ]


@pytest.mark.parametrize("word", ["inoculate", "inoculation", "transform", "transfect", "replate"])
def test_a_lab_verb_one_edit_from_a_keyword_is_not_corrected_to_it(word: str) -> None:
    assert keywords(f"{word} the plate") == f"{word} the plate"


def test_a_bracket_saying_what_a_named_well_is_names_no_second_destination() -> None:
    lex = Lexicon(LABS["b2_micro"].view)
    ents = extract("add 50 uL CAMHB into MIC_P1 A1-A12 (A12 = sterility control)", lex, ())
    assert [w.text for w in ents.wellsets] == ["A1-A12"]


def test_a_bracket_that_only_names_wells_narrows_the_set_before_it() -> None:
    lex = Lexicon(LABS["b2_micro"].view)
    ents = extract("copy row A of od_plate (A1-A4) into MIC_P1, same wells, 20 uL", lex, ())
    assert "A1-A4" in [w.text for w in ents.wellsets]
