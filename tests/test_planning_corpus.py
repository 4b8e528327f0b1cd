"""The rule planner on the test part of the planning corpus: the Done-when thresholds.

The test part measures generalisation: nobody develops the planner against it, and this test
reports only aggregate figures (per family), never an individual request. Every answer is
judged by evals/planning.py: plans by simulating them on the lab's twins.
"""

from __future__ import annotations

from collections import defaultdict

import pytest

from agents.task.planning.rules import RulePlanner
from evals.planning import CORPUS, Entry, Labs, Verdict, load_entries, run

Results = list[tuple[Entry, Verdict, float]]

OUTCOME_TARGET = 0.90
FACTS_TARGET = 0.85


@pytest.fixture(scope="module")
def results() -> Results:
    entries = load_entries("test")
    if not entries:
        pytest.skip(f"the planning corpus has no test part yet ({CORPUS / 'test'})")
    return run(RulePlanner(), entries, Labs())


def _table(results: Results) -> str:
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for entry, verdict, _ in results:
        row = rows[entry.family]
        row[0] += verdict.outcome_ok
        row[1] += 1
        if entry.expect == "plan":
            row[2] += bool(verdict.facts_ok)
            row[3] += 1
    return "; ".join(
        f"{k}: outcome {o}/{n}, facts {f}/{m}" for k, (o, n, f, m) in sorted(rows.items())
    )


def test_at_least_90_percent_of_outcomes_are_right(results: Results) -> None:
    right = sum(v.outcome_ok for _, v, _ in results)
    assert right / len(results) >= OUTCOME_TARGET, _table(results)


def test_at_least_85_percent_of_plans_are_right_in_every_fact(results: Results) -> None:
    plans = [(e, v) for e, v, _ in results if e.expect == "plan"]
    right = sum(bool(v.outcome_ok and v.facts_ok) for _, v in plans)
    assert plans and right / len(plans) >= FACTS_TARGET, _table(results)


def test_no_plan_drops_a_clause(results: Results) -> None:
    dropped = sum(v.dropped_clause for _, v, _ in results)
    assert dropped == 0
