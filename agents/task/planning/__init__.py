"""Planners: request + lab view -> Plan | Clarification | Refusal."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

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
    """The LLM planner when a model is named (or ``$LABWRIGHT_MODEL``), else the rule planner."""
    model = model or os.environ.get("LABWRIGHT_MODEL") or None
    if model:
        from agents.task.planning.llm import LLMPlanner

        return LLMPlanner(model)
    from agents.task.planning.rules import RulePlanner

    return RulePlanner()


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
