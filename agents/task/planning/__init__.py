"""Planners: request + lab view -> Plan | Clarification | Refusal."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

from agents.task.planning.models import (
    Clarification,
    InstrumentView,
    LabView,
    LabwareView,
    Plan,
    Planner,
    PlanResult,
    PlanStep,
    Refusal,
    WellView,
)

if TYPE_CHECKING:
    from agents.task.planning.llm import LLMPlanner, PlannerUnavailable
    from agents.task.planning.rules import RulePlanner

# The planners are imported when first named: whoever only needs the plan models (a device
# agent, a resumed run, an instrument server's tests) does not load the LLM stack or the
# grammar (a few hundred ms of a process's start).
_LAZY = {
    "LLMPlanner": "agents.task.planning.llm",
    "PlannerUnavailable": "agents.task.planning.llm",
    "RulePlanner": "agents.task.planning.rules",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_planner(model: str | None = None) -> Planner:
    """The LLM planner when a model is named (or ``$LABWRIGHT_MODEL``), else the rule planner
    (built the first time it is used: a resumed run never plans again, and the rule planner's
    families are a large part of a task process's start)."""
    model = model or os.environ.get("LABWRIGHT_MODEL") or None
    if model:
        from agents.task.planning.llm import LLMPlanner

        return LLMPlanner(model)
    return cast(Planner, RulePlannerOnFirstUse())


class RulePlannerOnFirstUse:
    """A :class:`RulePlanner` imported and built when something first asks it for anything."""

    planner_name = "RulePlanner"

    def _planner(self) -> Any:
        built = self.__dict__.get("_built")
        if built is None:
            from agents.task.planning.rules import RulePlanner

            built = self.__dict__["_built"] = RulePlanner()
        return built

    def __getattr__(self, name: str) -> Any:
        return getattr(self._planner(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._planner(), name, value)


__all__ = [
    "Clarification",
    "InstrumentView",
    "LLMPlanner",
    "LabView",
    "LabwareView",
    "Plan",
    "PlanResult",
    "PlanStep",
    "Planner",
    "PlannerUnavailable",
    "Refusal",
    "RulePlanner",
    "WellView",
    "make_planner",
]
