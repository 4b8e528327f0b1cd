"""At most once: every executed command goes through the action ledger.

The intent is written before the instrument is called and the outcome after; a repeated
action id returns the recorded outcome (or refuses), never acts again. An in-doubt action
whose read back showed how far it got is completed from there under its own id.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from pydantic import BaseModel

from device_servers.errors import Code, DeviceError, GateRefused
from device_servers.runtime._status import Status
from device_servers.runtime._trial import expand_before
from state_store import args_hash


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
            prims, _ = s.twin.clone().run(cmd)
            try:
                s.ledger.begin(action_id, name, digest, canonical, run_id)
            except sqlite3.IntegrityError:
                replay = self.replay(action_id, digest)
                if replay is not None:
                    return replay
                raise  # pragma: no cover - replay raises for every other status
            s.ledger.clear_resume_points()
            return await self.carry_out(action_id, prims, 0, log, warnings)

    async def carry_out(
        self, action_id: str, prims: list[Any], start: int, log: str, warnings: list[str]
    ) -> dict[str, Any]:
        """Send ``prims[start:]`` one by one (progress recorded after each), then reconcile
        and record the outcome. Called under the lock, with the ledger intent written."""
        s = self.s
        events: list[dict[str, Any]] = []
        try:
            for index, prim in enumerate(prims[start:], start + 1):
                if s.estop:
                    raise GateRefused(
                        Code.ESTOP_ACTIVE,
                        "emergency stop during the command",
                        "a person clears it with reset_estop, then read_back",
                    )
                observed = await s.driver.adapter.execute(prim)
                _, evs = s.twin.apply(prim)
                s.ledger.progress(action_id, index)
                evs = [*evs, *(observed or [])]
                for ev in evs:
                    s.emit(log, ev["type"], {**ev["data"], "action_id": action_id})
                events.extend(evs)
        except DeviceError as exc:
            deviations = await self.after_failure(exc, s.driver.touched(prims), log)
            payload = exc.to_payload(action_id)
            if deviations:
                payload.setdefault("extra", {})["deviations"] = deviations
                exc.extra = {**exc.extra, "deviations": deviations}
            s.ledger.finish(action_id, "failed", {"ok": False, "error": payload})
            s.persist()
            s.emit(log, "error", payload)
            raise
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
                f"completed after a restart: {start} of {len(expanded[1])} operations had "
                "happened (read back); the rest sent once",
            )
            return await self.carry_out(action_id, expanded[1], start, s.direct_log, [])

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
