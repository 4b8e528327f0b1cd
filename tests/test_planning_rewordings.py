"""The planner's stages under rewordings that keep a request's meaning: units spelt out,
the lab's ids written with a space, ... (bench/planner_variants.py measures the whole)."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB, plan

from agents.task.planning._coverage import clauses_of
from agents.task.planning._normalise import normalise
from agents.task.planning._own_ids import own_ids
from agents.task.planning.models import Plan, Refusal


# --------------------------------------------------------------------------- normalise
@pytest.mark.parametrize(
    ("written", "short"),
    [
        ("add 150 microlitres buffer", "add 150 uL buffer"),
        ("add 25 micro-liters dye", "add 25 uL dye"),
        ("0.2 millilitres of PBS", "0.2 mL of PBS"),
        ("hold at 4 degrees C", "hold at 4 C"),
        ("37 deg. Celsius", "37 C"),
        ("95 degrees 30 seconds", "95 C 30 s"),
        ("stage 1: 50 c 2 min", "stage 1: 50 C 2 min"),
        ("5 minutes, then 2 hours", "5 min, then 2 h"),
        ("20 ul each", "20 uL each"),
    ],
)
def test_a_unit_after_a_number_is_written_one_short_way(written: str, short: str) -> None:
    assert normalise(written).text == short


def test_a_unit_word_without_a_number_and_fahrenheit_are_left_alone() -> None:
    assert normalise("the microlitre scale at 98 degrees F").text == (
        "the microlitre scale at 98 degrees F"
    )


# --------------------------------------------------------------------------- own ids
@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("Read: plate 1, 600 nm", "Read: plate_1, 600 nm"),
        ("add 5 uL to Plate-2 A1", "add 5 uL to plate_2 A1"),
        ("move plate2 to hotel 1", "move plate_2 to hotel 1"),
    ],
)
def test_the_lab_s_ids_written_with_a_space_are_read_as_the_ids(written: str, read: str) -> None:
    assert own_ids(written, LAB) == read


def test_an_id_is_never_read_inside_a_longer_name_or_number() -> None:
    for text in ("plate 10", "plate_1 A1", "plate 1.5", "myplate 1"):
        assert own_ids(text, LAB) == text


def test_a_spaced_id_is_planned_and_the_trace_keeps_the_person_s_words() -> None:
    result = plan("Read: plate 1, 600 nm")
    assert isinstance(result, Plan)
    assert result.steps[-1].args["wavelength_nm"] == 600
    assert [t.clause for t in result.trace] == clauses_of(result.request) == ["plate 1, 600 nm"]


# --------------------------------------------------------------------------- spelling
@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("trasnfer 5 uL", "transfer 5 uL"),
        ("Dipsense 80 uL", "Dispense 80 uL"),
        ("incubtae 15 min", "incubate 15 min"),
        ("pipete = 8-channel", "pipette = 8-channel"),
        ("serial diltuion from A1", "serial dilution from A1"),
    ],
)
def test_a_misspelt_verb_or_keyword_is_corrected_before_the_split(written: str, meant: str) -> None:
    assert normalise(written).text == meant


def test_inflections_other_words_and_quoted_names_are_not_corrected() -> None:
    for text in ("Repeats", "mixer", "pipets", "the black plate", "cells", "diluted"):
        assert normalise(text).text == text
    assert normalise('add 5 uL "dipsense" to A1').quoted == ("dipsense",)


def test_a_misspelt_verb_after_a_comma_still_starts_its_own_clause() -> None:
    result = plan("add 20 uL dye to plate_1 A1:A3, incubtae at 37 C for 10 min")
    assert isinstance(result, Plan)
    assert [t.kind for t in result.trace] == ["action", "action"]


# --------------------------------------------------------------------------- lists
def test_a_destination_left_unsaid_in_a_new_sentence_is_the_wells_before_as_after_then() -> None:
    for joiner in (", then ", ". ", "\n2. "):
        result = plan(f"1. add 50 uL buffer to plate_1 A1:A3{joiner}add 20 uL dye")
        assert isinstance(result, Plan), joiner
        assert result.steps[-1].args["destination_wells"] == ["A1", "A2", "A3"]


def test_one_transfer_said_with_two_verbs_over_two_sentences_or_items() -> None:
    for joiner in (". Then ", "\n2. ", "; "):
        result = plan(f"Take 40 uL of dye from the reservoir{joiner}put it into plate_1 B2")
        assert isinstance(result, Plan), joiner
        assert len(result.steps) == 1 and result.steps[0].args["destination_wells"] == ["B2"]


# --------------------------------------------------------------------------- not a lab request
@pytest.mark.parametrize(
    "request_text",
    [
        "Hi! How do I make a 2-fold serial dilution? Thanks!",
        "For my assay tomorrow: What is the Km of HRP for dye?",
        "Step 1 - why does my buffer turn cloudy?",
    ],
)
def test_a_question_with_a_greeting_or_a_label_around_it_is_still_no_lab_request(
    request_text: str,
) -> None:
    result = plan(request_text)
    assert isinstance(result, Refusal) and result.code == "not_a_lab_request"
