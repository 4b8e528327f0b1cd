"""The rule planner on the development part of the planning corpus: every entry right.

The dev part is what the planner's developers read and write; each entry is a request the
planner once got wrong or a voice it must keep understanding. A change that breaks one of them
fails here, with the entry's id and what went wrong (the test part never prints an entry).
"""

from __future__ import annotations

from agents.task.planning.rules import RulePlanner
from evals.planning import Labs, load_entries, run


def test_every_dev_entry_gets_the_expected_outcome_and_facts() -> None:
    entries = load_entries("dev")
    assert len(entries) >= 400
    wrong = [
        f"{entry.id}: {'; '.join(verdict.problems[:2]) or 'wrong outcome'}"
        for entry, verdict, _ in run(RulePlanner(), entries, Labs())
        if not verdict.outcome_ok or verdict.facts_ok is False or verdict.dropped_clause
    ]
    assert not wrong, f"{len(wrong)} dev entries wrong:\n" + "\n".join(wrong[:30])
