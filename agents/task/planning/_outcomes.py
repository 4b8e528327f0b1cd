"""The two ways a rule-planning step stops early: ask a person, or refuse.

Raised anywhere below :class:`~agents.task.planning.rules.RulePlanner` and turned into a
``Clarification`` or a ``Refusal`` there, so a builder deep in a chained request can stop the
whole plan with one ``raise``::

    PlanningStop
    ├── Ask      -> Clarification (something is missing or unknown)
    └── Refuse   -> Refusal (impossible or unsafe)
"""

from __future__ import annotations

from collections.abc import Iterable


class PlanningStop(Exception):
    """Base of the early stops of the rule planner."""


class Ask(PlanningStop):
    """The request leaves out something the lab state cannot give."""

    def __init__(self, question: str, missing: Iterable[str], options: Iterable[str] = ()) -> None:
        super().__init__(question)
        self.question = question
        self.missing = list(missing)
        self.options = list(dict.fromkeys(options))


class Refuse(PlanningStop):
    """The request asks for something impossible or unsafe; ``code`` says why in one word
    (see :data:`~agents.task.planning.models.REFUSAL_CODES`)."""

    def __init__(self, reason: str, code: str = "capacity") -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code
