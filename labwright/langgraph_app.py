"""The task graph as LangGraph's own server serves it (``langgraph dev`` with ``langgraph.json``).

The server owns the checkpoints and the HTTP API (threads, runs, interrupts); this module
gives it the graph with the lab's live context bound in: the device agents on one MCP session
per instrument (opened once per server process, for the lab of ``$LABWRIGHT_CONFIG``, by
default ``examples/lab.yaml``), the planner, the policies, the audit log and the approval
signer. Every run is driven with ``durability="sync"``, whatever the request asks.

Who approves: :mod:`labwright.langgraph_auth` authenticates each request's bearer token
against the lab's people; the approval node reads the authenticated person from the run's
config and signs the approval for them. An unauthenticated approval is void (nothing moves).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

from agents.task.graph import DURABILITY, builder
from agents.task.runner import TaskRunner
from agents.task.state import TaskContext
from device_servers.lab import load

_LOCK = asyncio.Lock()
_RUNNER: TaskRunner | None = None
_STACK = contextlib.AsyncExitStack()


async def lab_context() -> TaskContext:
    """The lab's live context, opened once for this process."""
    global _RUNNER
    async with _LOCK:
        if _RUNNER is None:
            from agents.task.planning import make_planner
            from labwright.lab_runner import runner_for

            lab = load(os.environ.get("LABWRIGHT_CONFIG") or None)
            runner = runner_for(lab, make_planner(None))
            await _STACK.enter_async_context(runner)
            _RUNNER = runner
        return _RUNNER.context


_CLASSES: dict[int, type] = {}


def _bound(context: TaskContext) -> type:
    """The compiled graph's class, with the lab's context and sync durability bound in."""
    if id(context) in _CLASSES:
        return _CLASSES[id(context)]
    base = type(builder().compile())

    class LabGraph(base):  # type: ignore[misc, valid-type]
        def astream(self, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(kwargs.get("context"), TaskContext):
                kwargs["context"] = context
            kwargs["durability"] = DURABILITY  # every run that may touch an instrument
            kwargs.pop("checkpoint_during", None)
            return super().astream(*args, **kwargs)

    _CLASSES[id(context)] = LabGraph
    return LabGraph


@contextlib.asynccontextmanager
async def graph(config: Any = None) -> AsyncIterator[Any]:
    """The graph factory named in ``langgraph.json`` (the server adds its checkpointer)."""
    context = await lab_context()
    compiled = builder().compile()
    yield _bound(context)(**{k: v for k, v in compiled.__dict__.items() if k != "__orig_class__"})
