"""The coverage check: a plan is handed over only if every clause of the request is in it.

Every clause of the request (as :mod:`._clauses` splits it) must appear in the plan's
"understood as" trace, an action clause must map to at least one step of the plan, and every
step must belong to a clause. The rule planner builds its trace as it plans; the LLM planner
is asked for one and is held to the same check. The request is data here, never instructions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agents.task.planning._clauses import split
from agents.task.planning._normalise import normalise
from agents.task.planning.models import Plan


def clauses_of(request: str, labware: Iterable[str] = ()) -> list[str]:
    """The clauses of a request in the person's words, as the trace must list them
    (``labware``: the lab's labware ids, which the split reads as names, never as labels)."""
    return [c.said for c in split(normalise(request), frozenset(n.lower() for n in labware))]


def _key(text: str) -> str:
    return " ".join(text.lower().replace('"', "").split()).strip(" .,;:!?-")


def problems(
    plan: Plan, labware: Iterable[str] = (), expected: Sequence[str] | None = None
) -> list[str]:
    """What the plan's trace leaves out; empty when every clause is planned. ``expected``:
    the request's clauses when the caller has split it already (as :func:`clauses_of`)."""
    if expected is None:
        expected = clauses_of(plan.request, labware)
    traced = {_key(t.clause): t for t in plan.trace}
    ids = {s.id for s in plan.steps}
    found: list[str] = []
    for clause in expected:
        item = traced.get(_key(clause))
        if item is None:
            found.append(f"the clause '{clause}' is not in the plan")
            continue
        unknown = [s for s in item.steps if s not in ids]
        if unknown:
            found.append(f"the clause '{clause}' maps to steps the plan does not have: {unknown}")
        if item.kind == "action" and not item.steps:
            found.append(f"the clause '{clause}' has no step in the plan")
    covered = {s for t in plan.trace for s in t.steps}
    stray = [s.id for s in plan.steps if s.id not in covered]
    if stray:
        found.append(f"steps {stray} belong to no clause of the request")
    return found
