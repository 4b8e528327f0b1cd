"""Pick lists: the tip use said anywhere (a title, brackets, a sentence with its reason) works
every pick of the list, and a second pair said after a first ("..., and from A2 to B3") is a
source and a destination, never the wells between them."""

from __future__ import annotations

from agents.task.planning._entities import extract
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._wellsets import find_all
from agents.task.planning.families._tip_wishes import tips_only
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

PICKS = Labs()["r8m_picks"].view


def _tips(request: str) -> int:
    plan = RulePlanner().plan(request, PICKS)
    assert isinstance(plan, Plan), plan
    return sum(1 for s in plan.steps if s.command == "pick_up_tips")


def test_one_tip_said_for_a_list_serves_every_line_of_it() -> None:
    lines = "\nmother_96 B4 -> daughter_96 A1, 25 uL\nmother_96 C8 -> daughter_96 A2, 25 uL"
    assert _tips("Hit list, same tip:" + lines) == 1
    assert _tips("Picks (one tip throughout)" + lines) == 1


def test_a_tip_wish_with_its_reason_is_still_only_a_tip_wish() -> None:
    lex = Lexicon(PICKS)
    for said in (
        "Same tip is fine since they are all the same compound",
        "Same tip is fine, they're replicates",
        "You can use the same tip because it's all one compound",
        "Pick list [fresh tip each]",
    ):
        assert tips_only(extract(said, lex, ())), said


def test_a_second_pair_after_a_first_is_no_range_of_wells() -> None:
    text = "Transfer 10 uL from P A1 to Q B1, and from A2 to B3"
    assert [s.text for s in find_all(text)] == ["A1", "B1", "A2", "B3"]
    text = "Transfer 10 uL from P A1 to Q B1 and B2, and A2 to B3 and B4"
    assert [s.text for s in find_all(text)] == ["A1", "B1 and B2", "A2", "B3 and B4"]
    assert [s.text for s in find_all("Add 10 uL buffer to wells from A1 to A6")] == ["A1 to A6"]
