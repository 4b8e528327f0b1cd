"""The task agent's state and run-scoped context.

State is plain JSON-able data, checkpointed after every node (``durability="sync"``) outside
any model's context. A checkpoint stores every channel value whole, so the state holds only
what is small and what the next decision needs: the request, references to the plan and the
simulation report (stored once by content hash), per instrument how many of its steps have
finished, the steps under way again or waiting for a person, per lane the cursor of the run's
observations (recorded one per dispatch, outside the checkpoints), deviations and the report --
the same size at step 10,000 as at step 1 (see :mod:`agents.task.records`). Steps run as
parallel branches (:mod:`agents.task.lanes`): the channels they write have reducers. Live
objects (device agents, the planner, the records' database connection) are not state: they
are the run's context, rebuilt by whoever resumes the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from agents.device.agent import DeviceAgent
from agents.task.planning.models import Planner
from agents.task.records import RunRecords
from agents.task.timeline import WINDOW
from policies import PolicyEngine
from state_store import AuditLog
from state_store.signoff import ApprovalSigner


def merge_max(old: dict[str, int] | None, new: dict[str, int] | None) -> dict[str, int]:
    """Per-key maximum: counters that concurrent branches advance (each its own lane)."""
    out = dict(old or {}) if isinstance(old, dict) else {}
    for key, value in (new or {}).items() if isinstance(new, dict) else ():
        out[key] = max(int(value), out.get(key, 0))
    return out


def merge_steps(
    old: dict[str, dict[str, Any]] | None, new: dict[str, dict[str, Any] | None] | None
) -> dict[str, dict[str, Any]]:
    """Per-step entries, each written whole by the one branch or node handling that step; an
    entry written ``None`` is gone (the step finished)."""
    out = dict(old or {})
    for key, value in (new or {}).items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def add_list(old: list[Any] | None, new: list[Any] | None) -> list[Any]:
    """Concatenation: branches append what they found (deviations)."""
    return [*(old or []), *(new or [])]


class StepEntry(TypedDict, total=False):
    """A step under way again or waiting for a person (a fresh step has none)."""

    status: str  # escalated | retry | approved
    attempt: int  # the attempt number its next dispatch uses (a new action id per attempt)
    failures: int  # consecutive failures
    resume: dict[str, Any] | None  # how it continues after a person's retry (what is left)
    escalation: dict[str, Any] | None  # the question for a person (status escalated)


class TaskState(TypedDict, total=False):
    run_id: str
    request: str
    outcome: str  # plan | clarification | refusal
    plan_ref: str | None  # sha256 of the plan, stored in the run records
    answer: dict[str, Any] | None  # the clarification or refusal
    simulation_ref: str | None  # sha256 of the simulation report
    schedule_ref: str | None  # the simulation whose timeline orders the steps left
    replanned: bool
    basis: dict[str, str] | None  # content hashes of what the approval question shows
    approval: dict[str, Any] | None  # the person's answer; ``record`` is the signed approval
    voided: dict[str, Any] | None  # why the last approval was void (the run asks again)
    previous_plan_ref: str | None  # the plan before an edit or a void approval (for the diff)
    sequential: bool  # a person asked for one step after another
    # Per instrument: how many of its steps (in plan order) have finished (done or skipped).
    lanes: Annotated[dict[str, int], merge_max]
    # Per step under way again or waiting for a person (see StepEntry); finished steps drop out.
    steps: Annotated[dict[str, dict[str, Any]], merge_steps]
    # Per lane (instrument): observations recorded so far; the newest is at observed - 1.
    observed: Annotated[dict[str, int], merge_max]
    wave: int  # windows of steps dispatched so far
    step: int  # the first unfinished step, in plan order (where progress views stand)
    deviations: Annotated[list[dict[str, Any]], add_list]
    proposal: dict[str, Any] | None  # a replanned rest waiting for a person's approval
    replans: int  # remainders replanned so far (new step ids get -r<n>)
    status: str  # done | refused | clarification | rejected | failed | aborted
    report: dict[str, Any] | None


@dataclass
class TaskContext:
    """Live, per-process resources of a run: never checkpointed."""

    agents: dict[str, DeviceAgent]
    planner: Planner
    policies: dict[str, PolicyEngine] = field(default_factory=dict)
    audit: AuditLog | None = None
    model: str | None = None
    progress: Callable[[str, dict[str, Any]], None] | None = None
    records: RunRecords = field(default_factory=RunRecords.in_memory)
    signer: ApprovalSigner | None = None  # checks a person's approval before anything moves
    # The windows of steps this process dispatched (agents.task.lanes.Wave), by (run, wave).
    waves: dict[tuple[str, int], Any] = field(default_factory=dict)
    window: int = WINDOW  # steps dispatched in one superstep at most

    def tell(self, what: str, **data: Any) -> None:
        if self.progress is not None:
            self.progress(what, data)
