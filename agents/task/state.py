"""The task agent's state and run-scoped context.

State is plain JSON-able data, checkpointed after every node (``durability="sync"``) outside
any model's context. A checkpoint stores every channel value whole, so the state holds only
what is small and what the next decision needs: the request, references to the plan and the
simulation report (stored once by content hash), the position in the plan, the cursor of the
run's observations (recorded one per dispatch, outside the checkpoints), deviations, the
question for a person and the report -- the same size at step 10,000 as at step 1 (see
:mod:`agents.task.records`). Live objects (device agents, the planner, the records' database
connection) are not state: they are the run's context, rebuilt by whoever resumes the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from agents.device.agent import DeviceAgent
from agents.task.planning.models import Planner
from agents.task.records import RunRecords
from policies import PolicyEngine
from state_store import AuditLog
from state_store.signoff import ApprovalSigner


class TaskState(TypedDict, total=False):
    run_id: str
    request: str
    outcome: str  # plan | clarification | refusal
    plan_ref: str | None  # sha256 of the plan, stored in the run records
    answer: dict[str, Any] | None  # the clarification or refusal
    simulation_ref: str | None  # sha256 of the simulation report
    replanned: bool
    basis: dict[str, str] | None  # content hashes of what the approval question shows
    approval: dict[str, Any] | None  # the person's answer; ``record`` is the signed approval
    voided: dict[str, Any] | None  # why the last approval was void (the run asks again)
    previous_plan_ref: str | None  # the plan before an edit or a void approval (for the diff)
    step: int  # index of the next plan step to dispatch
    attempt: int  # attempt number of that step (a new action id per attempt)
    failures: int  # consecutive failures of that step
    completions: int  # in-doubt completions of that step's action in a row (crash loops)
    observed: int  # observations recorded so far; the newest is at observed - 1
    deviations: list[dict[str, Any]]
    escalation: dict[str, Any] | None
    resume: dict[str, Any] | None  # how the step continues after a person's retry (what is left)
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

    def tell(self, what: str, **data: Any) -> None:
        if self.progress is not None:
            self.progress(what, data)
