"""labwright._lazy_packages: a package's ``__init__`` runs when something asks it for a name.

Each check is a new interpreter (what a process imports is decided once, at its start).
"""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT

GRAPH_THEN_LANGSMITH = """
import sys
import labwright
from agents.task.graph import compile_graph
import langchain_core.tracers.schemas
models = sorted(m for m in sys.modules if m.startswith("langsmith.types."))
print(len(models))
import langsmith
from langsmith import RunTree, types
from langsmith.types import Run, Trace
print(langsmith.types is types, RunTree.__name__, Run.__module__, Trace.__module__)
print(len([m for m in sys.modules if m.startswith("langsmith.types.")]) > 100)
"""


def test_a_task_process_builds_none_of_langsmiths_api_models_until_one_is_asked_for() -> None:
    done = subprocess.run(
        [sys.executable, "-c", GRAPH_THEN_LANGSMITH],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    first, names, all_there = done.stdout.splitlines()
    # LangGraph loads langsmith.run_trees, which needs one submodule of langsmith.types.
    assert int(first) <= 2
    assert names.split() == ["True", "RunTree", "langsmith.types.run", "langsmith.types.trace"]
    assert all_there == "True"
