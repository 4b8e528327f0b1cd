"""Durable state outside any model's context: ledgers, event logs, runs, approvals, audit."""

from state_store.approvals import (
    ApprovalConflict,
    ApprovalError,
    ApprovalRecord,
    Approvals,
    NotPending,
)
from state_store.audit import AuditEntry, AuditLog, ChainProblem, VerifyReport
from state_store.db import connect
from state_store.events import EventLog
from state_store.instrument_state import InstrumentState
from state_store.ledger import Ledger, LedgerEntry, args_hash
from state_store.people import People, Person, local_operator
from state_store.runs import DeviceRuns
from state_store.task_runs import TaskRun, TaskRuns, TaskStatus

__all__ = [
    "ApprovalConflict",
    "ApprovalError",
    "ApprovalRecord",
    "Approvals",
    "AuditEntry",
    "AuditLog",
    "ChainProblem",
    "DeviceRuns",
    "EventLog",
    "InstrumentState",
    "Ledger",
    "LedgerEntry",
    "NotPending",
    "People",
    "Person",
    "TaskRun",
    "TaskRuns",
    "TaskStatus",
    "VerifyReport",
    "args_hash",
    "connect",
    "local_operator",
]
