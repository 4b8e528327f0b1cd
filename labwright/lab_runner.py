"""The task runner of a lab file: its instruments, lab file, database, state directory and
task-state URL, so every front end (terminal, web, LangGraph's server) starts the same one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agents.task.planning.models import Planner
    from agents.task.runner import TaskRunner
    from device_servers.lab import LabConfig


def runner_for(lab: LabConfig, planner: Planner, **options: Any) -> TaskRunner:
    """A ``TaskRunner`` for ``lab`` (loaded from a file); ``options`` go to the runner as is
    (model, progress, ...)."""
    from agents.task.runner import TaskRunner  # the task agent loads only where it is used

    if lab.source is None:
        raise ValueError("the lab was not loaded from a file: a task runner needs its lab file")
    return TaskRunner(
        list(lab.instruments),
        lab.source,
        lab.db_path,
        planner,
        env={"LABWRIGHT_STATE_DIR": str(lab.state_path)},
        state_url=lab.state_url,
        **options,
    )
