"""agents.task.planning.make_planner: the rule planner is imported when it is first used."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

from agents.task.runner import planner_name

SCRIPT = """
import sys
from agents.task.planning import make_planner
planner = make_planner(None)
before = "agents.task.planning.rules" in sys.modules
planner.tools = ["described"]  # set on the rule planner itself
replan = planner.replan
from agents.task.planning.rules import RulePlanner
described = planner.tools == ["described"]
print(before, callable(replan), described, type(planner._planner()) is RulePlanner)
"""


def test_a_task_process_that_never_plans_never_imports_the_rule_planner() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True", "True"]


def test_a_run_records_the_planner_it_will_use_by_its_class_name() -> None:
    from agents.task.planning import RulePlanner, make_planner

    assert planner_name(make_planner(None)) == "RulePlanner" == planner_name(RulePlanner())
