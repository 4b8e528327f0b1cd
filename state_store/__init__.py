"""Durable state outside any model's context: ledgers, event logs, runs, approvals."""

from state_store.approvals import Approvals
from state_store.db import connect
from state_store.events import EventLog
from state_store.instrument_state import InstrumentState
from state_store.ledger import Ledger, LedgerEntry, args_hash
from state_store.runs import DeviceRuns

__all__ = [
    "Approvals",
    "DeviceRuns",
    "EventLog",
    "InstrumentState",
    "Ledger",
    "LedgerEntry",
    "args_hash",
    "connect",
]
