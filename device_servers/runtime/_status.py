"""What every part of a runtime shares: the instrument's belief, its latches and its stores."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import time
from typing import Any

from device_servers.contract import InstrumentBase
from device_servers.kind import Driver, Twin
from policies import PolicyEngine
from state_store import (
    ApprovalRecord,
    Approvals,
    AuditLog,
    DeviceRuns,
    EventLog,
    InstrumentState,
    Ledger,
)

YIELD_EVERY = 64  # steps of a long validation between two yields to the event loop


async def breathe(index: int) -> None:
    """Let other tasks run (an e-stop) every :data:`YIELD_EVERY` steps of a long loop."""
    if index % YIELD_EVERY == YIELD_EVERY - 1:
        await asyncio.sleep(0)


class Status:
    """One instrument's twin, e-stop and staleness latches, run slot, lock and stores.

    The gate, the dispatcher, recovery and the run manager each hold the same ``Status``:
    what one of them changes (a latch, the twin) the others see at once.
    """

    def __init__(
        self, config: InstrumentBase, driver: Driver, conn: sqlite3.Connection, policy: PolicyEngine
    ) -> None:
        self.config = config
        self.id = config.id
        self.driver = driver
        self.policy = policy
        self.conn = conn
        self.ledger = Ledger(conn, self.id)
        self.events = EventLog(conn)
        self.runs = DeviceRuns(conn, self.id)
        self.audit = AuditLog(conn)
        self.approvals = Approvals(conn, self.audit)
        rules = json.dumps(policy.describe(), sort_keys=True, default=str)
        self.policy_hash = hashlib.sha256(rules.encode()).hexdigest()
        # Granted approvals the gate let through, used up when their action acts.
        self.approved: dict[str, ApprovalRecord] = {}
        self.persisted = InstrumentState(conn, self.id)
        self.simulated = config.simulated
        self.twin: Twin = driver.initial_twin()
        self.stale_reason: str | None = None
        self.estop_latch = 0  # the latched e-stop's number; 0: none
        self.lock = asyncio.Lock()
        self.active_run: str | None = None
        # Runs asked to stop (cancel_run or the e-stop): they stop before their next step,
        # and an operation they interrupt is reported as such.
        self.cancelling: set[str] = set()
        # Events of commands called directly (outside a run) go to this log.
        self.direct_log = f"{self.id}:direct"

    @property
    def estop(self) -> bool:
        return self.estop_latch != 0

    @estop.setter
    def estop(self, latched: bool) -> None:
        if not latched:
            self.estop_latch = 0
        elif not self.estop_latch:
            # A new e-stop: its own number (microseconds), never one an approval was asked for.
            self.estop_latch = time.time_ns() // 1000

    def persist(self) -> None:
        """Save the twin and the latches, so a restarted server starts from them."""
        self.persisted.save(self.twin.snapshot(full=True), self.stale_reason, self.estop_latch)

    def record_operation(
        self, action_id: str, done: int, log: str, events: list[dict[str, Any]]
    ) -> None:
        """One operation of an action happened: its count and its events, in one transaction
        (one sync to disk per operation, not one per row: the loop is blocked while it syncs,
        and an e-stop waits for the loop)."""
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.ledger.progress(action_id, done)
            for ev in events:
                self.emit(log, ev["type"], {**ev["data"], "action_id": action_id})
        except BaseException:
            self.conn.execute("ROLLBACK")
            self.events.forget(log)
            raise
        self.conn.execute("COMMIT")

    def emit(self, log: str, kind: str, data: dict[str, object]) -> None:
        """Append one event to ``log`` (a run id or the direct log)."""
        self.events.append(log, kind, data, self.simulated)
