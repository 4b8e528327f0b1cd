"""How a planner's answer fares against a planning-corpus entry, and what went wrong, said in
the corpus's own vocabulary.

The benchmark prints the kinds of :func:`failure_kind` for the test part, whose requests are
never shown: a count of "plan -> clarification [action]" or "tips" says where the planner is
weak without a single request's text.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Verdict:
    """How one answer fares against its entry."""

    entry: str
    outcome_ok: bool
    facts_ok: bool | None  # None: not a plan entry, or the outcome is already wrong
    problems: list[str] = field(default_factory=list)
    got: str = ""
    dropped_clause: bool = False
    cpu_s: float = 0.0
    about: str = ""  # what a question was about / a refusal's code (vocabulary terms only)


# What kind of fact a problem string is about, first match wins (see facts() and its helpers).
_FACT_KINDS = (
    ("fails on the twins", "plan fails on the twins"),
    ("which no action asks for", "does more than asked"),
    ("not in the plan", "instrument step missing"),
    ("happens before", "order of actions"),
    ("pairs in the order", "order of pairs"),
    ("channel(s)", "channels"),
    ("tips,", "tips"),
    ("mix", "mixing"),
    (" carries ", "liquid"),
    ("end state", "end state"),
    ("uL", "volume or wells"),
)


def failure_kind(expect: str, verdict: Verdict) -> list[str]:
    """What went wrong with an entry, in the corpus's own vocabulary and never its text: the
    outcome confused (``plan -> clarification [source]``) or each kind of fact missed."""
    if not verdict.outcome_ok:
        return [f"{expect} -> {verdict.got or '?'} [{verdict.about}]"]
    if verdict.facts_ok is not False:
        return []
    kinds = set()
    for problem in verdict.problems:
        kinds.add(next((k for key, k in _FACT_KINDS if key in problem), "other fact"))
    return sorted(kinds)
