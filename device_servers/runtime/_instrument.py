"""One instrument's runtime: the parts of :mod:`device_servers.runtime` over one shared
:class:`Status`."""

from __future__ import annotations

import sqlite3
from typing import Any

from pydantic import BaseModel

from device_servers.contract import InstrumentBase
from device_servers.errors import Code, GateRefused, ValidationFailed
from device_servers.kind import Driver, Twin
from device_servers.runtime._dispatch import Dispatcher
from device_servers.runtime._gate import Gate
from device_servers.runtime._recovery import Recovery
from device_servers.runtime._runs import RunManager
from device_servers.runtime._status import Status
from device_servers.runtime._trial import (
    parse_command,
    simulate_protocol,
)
from policies import PolicyEngine
from state_store import args_hash


class InstrumentRuntime:
    """One instrument: twin, adapter, ledger, events, runs, policy, e-stop."""

    def __init__(
        self, config: InstrumentBase, driver: Driver, conn: sqlite3.Connection, policy: PolicyEngine
    ) -> None:
        self.status = Status(config, driver, conn, policy)
        self.gate = Gate(self.status)
        self.dispatcher = Dispatcher(self.status)
        self.run_manager = RunManager(self.status, self.gate, self.dispatcher)
        self.recovery = Recovery(self.status, self.gate, self.run_manager)
        s = self.status
        self.config, self.id, self.driver, self.policy, self.conn = (
            config,
            s.id,
            driver,
            policy,
            conn,
        )
        self.ledger, self.events, self.runs = s.ledger, s.events, s.runs
        self.approvals, self.persisted = s.approvals, s.persisted
        self.simulated, self.direct_log = s.simulated, s.direct_log

    # The shared belief and latches, readable (and settable by tests) on the runtime.
    @property
    def twin(self) -> Twin:
        return self.status.twin

    @twin.setter
    def twin(self, value: Twin) -> None:
        self.status.twin = value

    @property
    def estop(self) -> bool:
        return self.status.estop

    @estop.setter
    def estop(self, value: bool) -> None:
        self.status.estop = value

    @property
    def stale_reason(self) -> str | None:
        return self.status.stale_reason

    @stale_reason.setter
    def stale_reason(self, value: str | None) -> None:
        self.status.stale_reason = value

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Set up the instrument and recover what a previous process left behind."""
        await self.driver.adapter.setup()
        self.recovery.recover_at_start()

    async def close(self) -> None:
        await self.run_manager.close()
        await self.driver.adapter.close()

    # ------------------------------------------------------------------ state
    def state(self) -> dict[str, Any]:
        """The instrument's structured snapshot (the ``get_state`` tool)."""
        s = self.status
        return {
            "instrument": s.id,
            "kind": s.driver.kind,
            "simulated": s.simulated,
            "execution_allowed": s.config.execution_allowed,
            "stale": s.stale_reason,
            "estop": s.estop,
            "busy_with_run": s.active_run,
            "in_doubt": [e.action_id for e in s.ledger.in_doubt()],
            # How a plate reaches this instrument, and the facts that decides it on.
            "stations": [st.model_dump(mode="json") for st in s.driver.stations()],
            "facts": {**s.twin.facts(), "busy": s.active_run is not None},
            **s.twin.snapshot(),
        }

    def parse(self, name: str, args: dict[str, Any]) -> BaseModel:
        return parse_command(self.driver, name, args)

    def simulate_protocol(
        self, cmds: list[BaseModel], twin: Twin | None = None
    ) -> tuple[Twin, list[tuple[int, list[dict[str, Any]]]]]:
        """Dry-run a protocol on a copy of the twin; raise the first failing step's error."""
        return simulate_protocol(self.driver, twin or self.twin, cmds)

    # ------------------------------------------------------------------ commands
    async def command(self, name: str, raw: dict[str, Any]) -> dict[str, Any]:
        """Run one tool call of an instrument command; raises DeviceError."""
        args = dict(raw)
        dry_run = args.pop("dry_run", True)
        action_id = args.pop("action_id", None)
        if not isinstance(dry_run, bool):
            raise ValidationFailed(
                Code.INVALID_ARGUMENT, "dry_run must be true or false", "pass dry_run as a boolean"
            )
        if action_id is not None and (
            not isinstance(action_id, str) or not action_id or len(action_id) > 200
        ):
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                "action_id must be a non-empty string of at most 200 chars",
                "derive it from (run, step, operation)",
            )
        cmd = self.parse(name, args)
        canonical = cmd.model_dump(mode="json")
        digest = args_hash(name, canonical)
        if not dry_run and action_id:
            entry = self.ledger.get(action_id)
            if entry is not None and entry.status == "in_doubt" and entry.args_hash == digest:
                progress = self.ledger.progress_of(action_id)
                if progress is not None and progress["resume_from"] is not None:
                    return await self.dispatcher.complete(name, cmd, action_id, progress)
            replay = self.dispatcher.replay(action_id, digest)
            if replay is not None:
                return replay
        context = await self.gate.context(cmd)
        warnings = self.gate.check(name, cmd, dry_run, action_id, digest, canonical, context)
        if dry_run:
            trial = self.twin.clone()
            prims, events = trial.run(cmd)
            return {
                "ok": True,
                "simulated": True,
                "dry_run": True,
                "action_id": action_id,
                "state": trial.snapshot(),
                "events": events,
                "warnings": warnings,
                "operations": len(prims),
                # What a person's approval of this exact call is bound to (see approvals).
                "args_hash": digest,
                "needs_approval": any(w.startswith("needs a person") for w in warnings),
            }
        if self.status.active_run is not None:
            raise GateRefused(
                Code.DEVICE_BUSY,
                f"run {self.status.active_run} is executing",
                "wait for the run to finish, or cancel_run it",
                retriable=True,
            )
        assert action_id is not None
        return await self.execute(
            name, cmd, action_id, digest, canonical, self.direct_log, warnings
        )

    async def execute(
        self,
        name: str,
        cmd: BaseModel,
        action_id: str,
        digest: str,
        canonical: dict[str, Any],
        log: str,
        warnings: list[str],
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """Dispatch a validated command at most once (see ``Dispatcher.execute``)."""
        return await self.dispatcher.execute(
            name, cmd, action_id, digest, canonical, log, warnings, run_id
        )

    # ------------------------------------------------------------------ recovery, e-stop
    async def read_back(self) -> dict[str, Any]:
        """Re-read the whole instrument, adopt what it reports, clear staleness."""
        return await self.recovery.read_back()

    async def confirm_state(self, raw: dict[str, Any]) -> dict[str, Any]:
        """A person confirms the twin matches the instrument; clears STATE_STALE (approval)."""
        return await self.recovery.confirm_state(raw)

    async def emergency_stop(
        self, reason: str | None = None, ignored: list[str] | None = None
    ) -> dict[str, Any]:
        """Latch the e-stop, abort the backend, cancel runs. Never gated, never refused."""
        return await self.recovery.emergency_stop(reason, ignored or [])

    async def reset_estop(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Clear the e-stop latch; needs a person's approval. The twin stays stale."""
        return await self.recovery.reset_estop(raw)

    # ------------------------------------------------------------------ runs
    async def start_run(
        self, protocol: Any, dry_run: bool = True, run_key: str | None = None
    ) -> dict[str, Any]:
        """Create a run and start it in the background; same run_key, same run."""
        return await self.run_manager.start_run(protocol, dry_run, run_key)

    def get_run(self, run_id: str) -> dict[str, Any]:
        return self.run_manager.get_run(run_id)

    def run_events(self, run_id: str, since_seq: int = 0, limit: int = 100) -> dict[str, Any]:
        return self.run_manager.run_events(run_id, since_seq, limit)

    async def cancel_run(self, run_id: str) -> dict[str, Any]:
        """Idempotent: a finished run is reported as it is."""
        return await self.run_manager.cancel_run(run_id)
