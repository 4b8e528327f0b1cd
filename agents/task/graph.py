"""The task graph, built from the node signatures (routing by ``Command[Literal[...]]``).

Compile it with a checkpointer and run it with ``durability="sync"``: a checkpoint is written
before the next node starts, so a crash never loses a dispatched step's observation.
"""

from __future__ import annotations

from typing import Any, cast

from langgraph.graph import START, StateGraph

from agents.task import approval, lanes, nodes, replan
from agents.task.state import TaskContext, TaskState
from agents.task.step import StepTask, step

DURABILITY = "sync"


def builder() -> StateGraph[TaskState, TaskContext, Any, Any]:
    graph: StateGraph[TaskState, TaskContext, Any, Any] = StateGraph(
        TaskState, context_schema=TaskContext
    )
    graph.add_node("interpret", nodes.interpret)
    graph.add_node("simulate", nodes.simulate)
    graph.add_node("approve", nodes.approve)
    graph.add_node("confirm", approval.confirm)
    graph.add_node("dispatch", lanes.dispatch)
    # One branch per step (Send): its input is the StepTask it was sent, not the state.
    graph.add_node("step", cast(Any, step), input_schema=StepTask)
    graph.add_node("escalate", nodes.escalate)
    graph.add_node("replan", replan.replan)
    graph.add_node("approve_replan", replan.approve_replan)
    graph.add_node("report", nodes.report)
    graph.add_edge(START, "interpret")
    graph.set_finish_point("report")
    return graph


def compile_graph(checkpointer: Any) -> Any:
    return builder().compile(checkpointer=checkpointer)
