"""Planners: request + lab view -> Plan | Clarification | Refusal."""

from __future__ import annotations

import os

from agents.task.planning.llm import LLMPlanner, PlannerUnavailable
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
from agents.task.planning.rules import RulePlanner


def make_planner(model: str | None = None) -> Planner:
    """The LLM planner when a model is named (or ``$LABWRIGHT_MODEL``), else the rule planner."""
    model = model or os.environ.get("LABWRIGHT_MODEL") or None
    if model:
        return LLMPlanner(model)
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
