"""The planner's caches are keyed on names only: two labs never share what they hold."""

from __future__ import annotations

from test_rule_planner import make_lab

from agents.task.planning._lexicon import Lexicon
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner


def _sources(result: object) -> list[tuple[object, object]]:
    assert isinstance(result, Plan), result
    return [(s.args.get("source"), s.args.get("source_well")) for s in result.steps if s.args]


def test_two_labs_with_the_same_plates_and_other_contents_each_plan_from_their_own() -> None:
    planner = RulePlanner()
    dye_in_a1 = make_lab(liquids={"A1": ("dye", 10000), "A2": ("buffer", 12000)})
    dye_in_a2 = make_lab(liquids={"A1": ("buffer", 10000), "A2": ("dye", 12000)})
    request = "transfer 50 uL dye to plate_1 A1"
    first = _sources(planner.plan(request, dye_in_a1))
    second = _sources(planner.plan(request, dye_in_a2))
    again = _sources(planner.plan(request, dye_in_a1))
    assert ("reservoir", "A1") in first and ("reservoir", "A2") not in first
    assert ("reservoir", "A2") in second and ("reservoir", "A1") not in second
    assert again == first


def test_a_liquid_word_belongs_to_the_lab_whose_liquid_it_is() -> None:
    substrate = Lexicon(make_lab(liquids={"A1": ("TMB substrate", 9000), "A2": ("water", 9000)}))
    blocking = Lexicon(make_lab(liquids={"A1": ("TMB blocker", 9000), "A2": ("water", 9000)}))
    assert [m.name for m in substrate.liquid_mentions("add TMB")] == ["TMB substrate"]
    assert [m.name for m in blocking.liquid_mentions("add TMB")] == ["TMB blocker"]


def test_a_lexicon_that_changes_its_words_changes_no_other_lexicon() -> None:
    lab = make_lab(liquids={"A1": ("TMB substrate", 9000), "A2": ("water", 9000)})
    first, second = Lexicon(lab), Lexicon(lab)
    first._by_word["tmb"] = "water"  # a stage that edits its own copy
    assert [m.name for m in second.liquid_mentions("add TMB")] == ["TMB substrate"]
