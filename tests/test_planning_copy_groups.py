"""Copies and replicates whose wells or destination are said in the ways people write them:
a listed group of wells per source, a range's end before a volume, a form whose verb comes
after its fields, and a replicate count said in a sentence of its own."""

from __future__ import annotations

from agents.task.planning._quantities import quantities
from agents.task.planning._tables import rewrite
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


def _moves(request: str, lab: str) -> dict[str, list[str]]:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan), result
    out: dict[str, list[str]] = {}
    for step in result.steps:
        if "source_well" in step.args:
            out.setdefault(step.args["source_well"], []).extend(step.args["destination_wells"])
    return out


def test_each_source_fills_its_own_listed_group() -> None:
    moves = _moves(
        "Spot sera_plate A1-A4 onto elisa-7, 3 spots each (A1-A3, B1-B3, C1-C3, D1-D3), 20 uL.",
        "r8s_serology",
    )
    assert moves["A1"] == ["A1", "A2", "A3"]
    assert moves["A4"] == ["D1", "D2", "D3"]


def test_groups_of_the_sources_own_shape_are_copies_of_the_set() -> None:
    moves = _moves(
        "sera_plate A1-A3 in triplicate -> elisa-7 A1-A3, B1-B3, C1-C3, 25 ul", "r8s_serology"
    )
    assert moves["A1"] == ["A1", "B1", "C1"]


def test_the_end_of_a_range_is_no_volume() -> None:
    said = quantities("into cols 1-6 and 7-12, 50 uL")
    assert [q.value for q in said] == [50.0]


def test_a_form_whose_verb_comes_last_is_read_with_the_verb_first() -> None:
    text = rewrite("Source: CPD-SRC. Destination: qc96. Volume: 5 uL. Stamp.")
    assert text.lower().startswith("stamp from cpd-src to qc96")


def test_a_replicate_count_in_a_sentence_of_its_own_counts_for_the_next_move() -> None:
    moves = _moves(
        "Each serum in triplicate. Transfer 40 uL sera_plate A1-A3 to elisa-7 A1-C3.",
        "r8s_serology",
    )
    assert moves["A2"] == ["A2", "B2", "C2"]
