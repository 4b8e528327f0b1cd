"""Evaluation suites: scripted scenarios run through the real stack, judged from ground truth.

Public surface: :func:`load_scenarios` / :class:`Scenario` (the YAML format),
:func:`run_suite` (run scenarios, in parallel), :func:`build_report` and the writers in
:mod:`evals.report`, and the safety detectors in :mod:`evals.safety`.
"""

from evals.report import build_report, write_reports
from evals.runner import run_suite
from evals.safety import Evidence, UnsafeEvent, unsafe_events
from evals.scenario import Scenario, ScenarioError, load_scenario, load_scenarios

__all__ = [
    "Evidence",
    "Scenario",
    "ScenarioError",
    "UnsafeEvent",
    "build_report",
    "load_scenario",
    "load_scenarios",
    "run_suite",
    "unsafe_events",
    "write_reports",
]
