"""At most once: every executed command goes through the action ledger.

The intent is written before the instrument is called and the outcome after; a repeated
action id returns the recorded outcome (or refuses), never acts again. An in-doubt action
whose read back showed how far it got is completed from there under its own id.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable
from typing import Any

from pydantic import BaseModel

from device_servers.errors import Code, DeviceError, GateRefused
from device_servers.kind import Twin
from device_servers.runtime import _trail as trail
from device_servers.runtime._operations import record
from device_servers.runtime._status import Status
from device_servers.runtime._trial import expand_before
from state_store import args_hash

# Failures after which the operation under way may or may not have happened.
LOST = {Code.CONNECTION_LOST, Code.HARDWARE_TIMEOUT}


class Dispatcher:
    """Sends validated commands to the adapter, operation by operation, at most once."""

    def __init__(self, status: Status) -> None:
        self.s = status

    def replay(self, action_id: str, digest: str) -> dict[str, Any] | None:
        """The recorded outcome of ``action_id``; None when it was never begun."""
        entry = self.s.ledger.get(action_id)
        if entry is None:
            return None
        if entry.args_hash != digest:
            raise GateRefused(
                Code.ACTION_ID_REUSED,
                f"action_id {action_id!r} was used for another call "
                f"({entry.command} with other arguments)",
                "derive a new action_id for a new action",
            )
        if entry.status == "done" and entry.result is not None:
            return {**entry.result, "replayed": True}
        if entry.status == "failed" and entry.result is not None:
            err = DeviceError.from_payload(entry.result["error"])
            err.extra = {**err.extra, "replayed": True}
            raise err
        if entry.status == "pending":
            raise GateRefused(
                Code.DEVICE_BUSY,
                f"action {action_id} is being executed now",
                "ask again when it has finished",
                retriable=True,
            )
        raise DeviceError(
            Code.ACTION_IN_DOUBT,
            f"action {action_id} was sent but its outcome was never recorded"
            + (f" ({entry.note})" if entry.note else ""),
            "read_back the instrument to see whether it happened; never re-send it blindly; "
            "a person decides whether to redo it under a new action_id",
            defined=False,
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
        """Dispatch a validated command at most once: ledger intent, then the instrument.

        The command is expanded on a copy of the twin under the lock, so two callers can never
        act on the same belief; a validation failure records nothing (nothing was sent).
        """
        s = self.s
        async with s.lock:
            replay = self.replay(action_id, digest)
            if replay is not None:
                return replay
            before = s.twin.clone()
            prims, _ = before.clone().run(cmd)
            try:
                s.ledger.begin(action_id, name, digest, canonical, run_id)
            except sqlite3.IntegrityError:
                replay = self.replay(action_id, digest)
                if replay is not None:
                    return replay
                raise  # pragma: no cover - replay raises for every other status
            s.ledger.clear_resume_points()
            approval = s.approved.pop(action_id, None)
            if approval is not None:
                trail.use(s, approval)
            by = approval.decided_by if approval is not None else None
            return await self.audited(
                action_id, by, self.carry_out(action_id, cmd, prims, 0, log, warnings, before)
            )

    async def audited(
        self, action_id: str, approved_by: str | None, work: Awaitable[dict[str, Any]]
    ) -> dict[str, Any]:
        """Carry an action out and write its audit row, whatever its outcome."""
        try:
            result = await work
        except DeviceError as exc:
            trail.action(self.s, action_id, {"ok": False, "error": exc.to_payload()}, approved_by)
            raise
        trail.action(self.s, action_id, result, approved_by)
        return result

    async def carry_out(
        self,
        action_id: str,
        cmd: BaseModel,
        prims: list[Any],
        start: int,
        log: str,
        warnings: list[str],
        before: Twin | None = None,
    ) -> dict[str, Any]:
        """Send ``prims[start:]`` one by one (progress recorded after each; what the twin can
        check re-checked before each), then reconcile and record the outcome. Called under
        the lock, with the ledger intent written; ``before`` is the belief it started from."""
        s = self.s
        events: list[dict[str, Any]] = []
        index, sent = start, False
        try:
            for index, prim in enumerate(prims[start:], start):
                sent = False
                if s.estop:
                    raise GateRefused(
                        Code.ESTOP_ACTIVE,
                        "emergency stop during the command",
                        "a person clears it with reset_estop, then read_back",
                    )
                await s.driver.precheck(s.twin, prim)
                sent = True
                observed = await s.driver.adapter.execute(prim)
                _, evs = s.twin.apply(prim)
                evs = [*evs, *(observed or [])]
                s.record_operation(action_id, index + 1, log, evs)
                events.extend(evs)
        except DeviceError as exc:
            err = await self._failed(action_id, cmd, prims, index, sent, exc, log, before)
            if err is exc:
                raise
            raise err from exc
        deviations = await self.reconcile(s.driver.touched(prims), log)
        result = {
            "ok": True,
            "simulated": s.simulated,
            "dry_run": False,
            "action_id": action_id,
            "state": s.twin.snapshot(),
            "events": events,
            "deviations": deviations,
            "warnings": warnings,
            "progress": record(s.driver, cmd, prims, len(prims)),
        }
        measurements = [e["data"] for e in events if e["type"] == "reading_taken"]
        if measurements:
            result["measurements"] = measurements
        s.ledger.finish(action_id, "done", result)
        s.persist()
        return result

    async def complete(
        self, name: str, cmd: BaseModel, action_id: str, progress: dict[str, Any]
    ) -> dict[str, Any]:
        """Finish an in-doubt action from where a read back showed it stopped: the operations
        that happened are not sent again, the rest are sent once, under the same action id."""
        s = self.s
        async with s.lock:
            progress = s.ledger.progress_of(action_id) or progress
            start = progress["resume_from"]
            expanded = expand_before(s.driver, cmd, progress)
            if start is None or expanded is None or s.stale_reason or s.estop:
                replay = self.replay(action_id, args_hash(name, cmd.model_dump(mode="json")))
                assert replay is not None  # pragma: no cover - replay raises when in doubt
                return replay
            # Used up: a crash while completing needs a new read back to find the new point.
            s.ledger.set_resume_from(action_id, None)
            s.ledger.annotate(
                action_id,
                f"completed after a restart or a lost outcome: {start} of {len(expanded[1])} "
                "operations had happened (read back); the rest sent once",
            )
            before, prims = expanded
            return await self.audited(
                action_id,
                None,
                self.carry_out(action_id, cmd, prims, start, s.direct_log, [], before),
            )

    async def _failed(
        self,
        action_id: str,
        cmd: BaseModel,
        prims: list[Any],
        index: int,
        sent: bool,
        exc: DeviceError,
        log: str,
        before: Twin | None,
    ) -> DeviceError:
        """Record a failure with what of the command happened, and return the error to raise.

        An operation interrupted by the e-stop or a cancel, or whose outcome was lost, leaves
        the action in doubt (its belief before and its progress kept), to be completed under
        its own id once a read back shows how far it got; any other failure is final, its
        ``remainder`` naming what is left as a new action would."""
        s = self.s
        if s.estop or log in s.cancelling:
            code = Code.ESTOP_ACTIVE if s.estop else Code.OPERATION_ABORTED
            by = "the emergency stop" if s.estop else "a cancel"
            exc = GateRefused(
                code,
                f"{by} interrupted the command after {index} of {len(prims)} operations "
                f"({exc.detail})",
                "a person resets the e-stop (reset_estop), then read_back shows what happened"
                if s.estop
                else "read_back shows what happened before the cancel",
                defined=False,
                extra=exc.extra,
            )
            status = "interrupted" if sent else "refused"
            doubt = True
        else:
            doubt = sent and exc.code in LOST
            status = "unknown" if doubt else ("failed" if sent else "refused")
        if not doubt and index < len(prims):
            s.driver.failed(s.twin, prims[index], exc)
        deviations = await self.after_failure(exc, s.driver.touched(prims), log)
        operations = record(s.driver, cmd, prims, index, status)
        if doubt:
            operations["remainder"] = None  # known once a read back shows how far it got
        exc.extra = {**exc.extra, "progress": operations, "in_doubt": doubt}
        if deviations:
            exc.extra["deviations"] = deviations
        payload = exc.to_payload(action_id)
        if doubt:
            if before is not None:
                s.ledger.keep_twin_before(action_id, before.snapshot(full=True))
            s.ledger.finish(action_id, "in_doubt", {"ok": False, "error": payload})
            s.ledger.annotate(
                action_id,
                f"{exc.code} after {index} of {len(prims)} operations: in doubt until read back",
            )
        else:
            s.ledger.finish(action_id, "failed", {"ok": False, "error": payload})
        s.persist()
        s.emit(log, "error", payload)
        return exc

    async def reconcile(self, touched: set[str] | None, log: str) -> list[dict[str, Any]]:
        """Read back what the command touched and adopt it; each disagreement is a deviation."""
        s = self.s
        seen = await s.driver.adapter.observe(touched)
        if seen is None:
            return []
        deviations = s.driver.reconcile(s.twin, seen, touched)
        for dev in deviations:
            s.emit(log, "deviation", dev)
        return deviations

    async def after_failure(
        self, exc: DeviceError, touched: set[str], log: str
    ) -> list[dict[str, Any]]:
        """Make the belief honest after a failed action: read back, or mark it stale."""
        s = self.s
        if not exc.defined:
            s.stale_reason = f"{exc.code} during an action: the instrument state is unknown"
            return []
        try:
            return await self.reconcile(touched, log)
        except DeviceError:
            s.stale_reason = f"read back failed after {exc.code}"
            return []
