"""Work that is not the lab's, said alongside lab work ("read plate_1 at 600 nm and tell me the
doubling time"): the lab work is planned and the rest is in the plan as not done, never
dropped inside a clause that was planned, never read as bench work."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning._off_bench import kept, off_bench
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner


def _plan(request: str) -> Plan:
    result = RulePlanner().plan(request, LAB)
    assert isinstance(result, Plan), result
    return result


@pytest.mark.parametrize(
    ("request_", "left"),
    [
        ("read plate_1 at 600 nm and tell me the doubling time", "tell me the doubling time"),
        ("read plate_1 at 600 nm, then calculate the mean of column 1", "calculate the mean"),
        ("read plate_1 at 600 nm; work out the growth rate of each well", "work out the growth"),
        ("read plate_1 at 450 nm & interpolate the unknowns off the curve", "interpolate"),
        ("Read OD600 of plate_1 and email me the results, thanks!", "email me the results"),
        ("read plate_1 at 600 nm and send me the data", "send me the data"),
        ("read plate_1 at 600 nm and plot a growth curve", "plot a growth curve"),
        ("read plate_1 at 600 nm and export the data to a spreadsheet", "export the data"),
        ("add 50 uL of buffer to plate_1 A1-A3. Then email Sam the layout.", "email Sam"),
    ],
)
def test_work_that_is_not_the_labs_is_in_the_plan_as_not_done(request_: str, left: str) -> None:
    plan = _plan(request_)
    not_done = [t for t in plan.trace if t.kind == "not_done"]
    assert len(not_done) == 1 and not_done[0].clause.startswith(left)
    assert not not_done[0].steps
    assert "NOT DONE" in plan.summary and left in plan.summary
    assert all(left not in t.clause for t in plan.trace if t.kind == "action")  # split off
    assert any(t.kind == "action" and t.steps for t in plan.trace)


@pytest.mark.parametrize(
    "request_",
    [
        "read plate_1 at 600nm and record the readings",
        "read plate_1 at 450 nm and report the values",
        "add 100 uL buffer to plate_1 A1-A3 and tell me when finished",
    ],
)
def test_what_the_run_report_keeps_anyway_is_a_fact_not_a_gap(request_: str) -> None:
    plan = _plan(request_)
    assert [t.kind for t in plan.trace] == ["action", "fact"]
    assert "NOT DONE" not in plan.summary


def test_a_clause_with_a_quantity_is_bench_work_whatever_its_first_word() -> None:
    plan = _plan("shake plate_1 5 min 300 rpm and record the readings after a 450 nm read")
    assert [t.kind for t in plan.trace] == ["action", "action"]
    assert any(s.command == "read_absorbance" for s in plan.steps)
    assert not off_bench("draw 50 uL from A1 into B1")


def test_the_detectors_fire_on_each_pattern_and_not_on_bench_verbs() -> None:
    for text in (
        "calculate the IC50",
        "then fit a 4PL",
        "also give me the CVs",
        "summarise it",
        "email me the results",
    ):
        assert off_bench(text), text
    for text in ("record the data", "report all the readings", "tell me once it's done"):
        assert kept(text), text
    for text in (
        "send plate_1 to the reader",
        "read plate_1",
        "add 50 uL",
        "record at 450 nm",
        "record luminescence",
        "then record the OD600",
    ):
        assert not off_bench(text) and not kept(text), text


def test_a_request_of_nothing_but_such_work_is_still_refused() -> None:
    result = RulePlanner().plan("calculate the doubling time of my culture and email it", LAB)
    assert result.kind == "refusal" and result.code == "not_a_lab_request"
