"""Planners: request + lab view -> Plan | Clarification | Refusal."""

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
]
