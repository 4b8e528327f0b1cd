"""The planning-corpus facts checker: it passes a right plan however the plan encodes its steps,
and it fails each wrong fact it claims to judge (volume, pairs, liquid, tips, channels, mixing,
order, an extra action, a failing simulation, end state, outcome kind and reason)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.task.planning import Clarification, Plan, PlanStep, Refusal
from agents.task.planning.models import TraceItem
from agents.task.planning.rules import RulePlanner
from evals.planning import Entry, Labs, judge, wells

LABS = Labs()
REQUEST = "add 50 uL of buffer to plate_1 A1:A3"


def _entry(**facts: Any) -> Entry:
    base: dict[str, Any] = {
        "id": "x",
        "family": "distribute",
        "phenomena": [],
        "lab": "standard",
        "request": REQUEST,
        "expect": "plan",
        "actions": [
            {
                "action": "transfer",
                "liquid": "buffer",
                "pairs": [{"from": "reservoir:A2", "to": "plate_1:A1..A3", "volume_ul": 50}],
                "channels": 1,
                "tips": 1,
            }
        ],
        "end_state": {"plate_1": {"A1": 50, "A3": 50, "A4": 0}},
    }
    base.update(facts)
    return Entry(**base)


def _plan(*steps: tuple[str, str, dict[str, Any]], request: str = REQUEST) -> Plan:
    plan_steps = [
        PlanStep(id=f"s{i}", instrument=inst, command=cmd, args=args)
        for i, (inst, cmd, args) in enumerate(steps, 1)
    ]
    trace = [TraceItem(clause=request, understood="x", steps=[s.id for s in plan_steps])]
    return Plan(request=request, summary="x", steps=plan_steps, trace=trace)


def _transfer(
    volume: float = 50, new_tip: str = "once", **extra: Any
) -> tuple[str, str, dict[str, Any]]:
    args = {
        "source": "reservoir",
        "source_well": "A2",
        "destination": "plate_1",
        "destination_wells": ["A1", "A2", "A3"],
        "volume_ul": volume,
        "new_tip": new_tip,
        **extra,
    }
    return ("lh1", "transfer", args)


def _verdict(
    plan: Plan | Clarification | Refusal, entry: Entry | None = None
) -> tuple[bool, bool | None]:
    v = judge(entry or _entry(), plan, LABS["standard"])
    return v.outcome_ok, v.facts_ok


def test_a_right_plan_passes_whether_it_uses_one_transfer_or_the_primitive_commands() -> None:
    assert _verdict(_plan(_transfer())) == (True, True)
    primitives = [("lh1", "pick_up_tips", {"rack": "tips_1", "channels": [0]})]
    for well in ("A1", "A2", "A3"):
        primitives += [
            ("lh1", "aspirate", {"labware": "reservoir", "wells": ["A2"], "volume_ul": 50}),
            ("lh1", "dispense", {"labware": "plate_1", "wells": [well], "volume_ul": 50}),
        ]
    primitives.append(("lh1", "drop_tips", {}))
    assert _verdict(_plan(*primitives)) == (True, True)


@pytest.mark.parametrize(
    "wrong",
    [
        _transfer(volume=40),  # the volume
        _transfer(new_tip="always"),  # the tips
        _transfer(mix_after=3),  # mixing nobody asked for
        ("lh1", "transfer", {**_transfer()[2], "source_well": "A1"}),  # the liquid (dye)
        ("lh1", "transfer", {**_transfer()[2], "destination_wells": ["A1", "A2"]}),  # a pair
    ],
)
def test_each_wrong_fact_of_a_transfer_fails(wrong: tuple[str, str, dict[str, Any]]) -> None:
    assert _verdict(_plan(wrong)) == (True, False)


def test_an_extra_action_and_a_plan_failing_on_the_twins_fail() -> None:
    extra = ("lh1", "transfer", {**_transfer()[2], "destination_wells": ["A4"]})
    verdict = judge(_entry(end_state={}), _plan(_transfer(), extra), LABS["standard"])
    assert not verdict.facts_ok and "which no action asks for" in verdict.problems[0]
    verdict = judge(_entry(), _plan(_transfer(volume=400)), LABS["standard"])
    assert not verdict.facts_ok and "fails on the twins" in verdict.problems[0]


def test_the_end_state_and_the_order_of_a_chain_are_judged() -> None:
    entry = _entry(end_state={"plate_1": {"A1": 60}})
    assert _verdict(_plan(_transfer()), entry) == (True, False)
    chain = {
        "action": "transfer",
        "pairs": [
            {"from": "plate_1:A1", "to": "plate_1:A2", "volume_ul": 10},
            {"from": "plate_1:A2", "to": "plate_1:A3", "volume_ul": 10},
        ],
        "ordered": True,
    }
    entry = _entry(actions=[_entry().actions[0], chain], end_state={})
    ordered = _plan(
        _transfer(), *(("lh1", "transfer", _hop(a, b)) for a, b in (("A1", "A2"), ("A2", "A3")))
    )
    reversed_ = _plan(
        _transfer(), *(("lh1", "transfer", _hop(a, b)) for a, b in (("A2", "A3"), ("A1", "A2")))
    )
    assert _verdict(ordered, entry) == (True, True)
    assert _verdict(reversed_, entry) == (True, False)


def _hop(src: str, dst: str) -> dict[str, Any]:
    return {
        "source": "plate_1",
        "source_well": src,
        "destination": "plate_1",
        "destination_wells": [dst],
        "volume_ul": 10,
        "new_tip": "once",
    }


def test_outcome_kind_missing_and_reason_are_judged() -> None:
    ask = Clarification(request=REQUEST, question="?", missing=["volume"])
    refuse = Refusal(request=REQUEST, reason="no", code="capacity")
    assert _verdict(ask, _entry(expect="clarify", missing=["volume"])) == (True, None)
    assert _verdict(ask, _entry(expect="clarify", missing=["plate"])) == (False, None)
    assert _verdict(refuse, _entry(expect="refuse", reason="capacity")) == (True, None)
    assert _verdict(refuse, _entry(expect="refuse", reason="tips")) == (False, None)
    assert _verdict(refuse) == (False, None)


def test_shakes_reads_and_moves_are_judged_by_their_settings() -> None:
    request = "shake plate_1 at 37 C for 5 min at 600 rpm"
    plan = RulePlanner().plan(request, LABS["standard"].view)
    assert isinstance(plan, Plan)
    shake = {
        "action": "shake",
        "plate": "plate_1",
        "rpm": 600,
        "duration_s": 300,
        "temperature_c": 37,
    }
    assert _verdict(plan, _entry(request=request, actions=[shake], end_state={})) == (True, True)
    slower = {**shake, "rpm": 500}
    assert _verdict(plan, _entry(request=request, actions=[slower], end_state={})) == (True, False)


def test_well_sets_of_the_corpus_notation_are_listed_row_by_row() -> None:
    assert wells("plate_1:A1..B2", LABS["standard"]) == [
        "plate_1:A1",
        "plate_1:A2",
        "plate_1:B1",
        "plate_1:B2",
    ]
