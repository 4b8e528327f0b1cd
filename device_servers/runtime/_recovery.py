"""Recovery and safety controls: start-up after a crash, read back, e-stop and its reset.

A restart marks what was in flight: pending actions become in doubt (with the belief they were
expanded on), unfinished runs interrupted, and the twin stale. A read back adopts what the
instrument reports and finds, for each in-doubt action, how many of its operations happened
when that is unambiguous, so the action can later be completed under its own id.
"""

from __future__ import annotations

import time
from typing import Any

from device_servers.errors import Code, DeviceError, GateRefused, ValidationFailed
from device_servers.runtime import _trail as trail
from device_servers.runtime._gate import Gate
from device_servers.runtime._operations import record
from device_servers.runtime._runs import RunManager
from device_servers.runtime._status import Status
from device_servers.runtime._trial import expand_before, parse_command
from state_store import args_hash

RESTART_STALE = "the server restarted: read_back the instrument before moving it"


class Recovery:
    """Start-up recovery, read back and resume points, confirm_state, e-stop."""

    def __init__(self, status: Status, gate: Gate, runs: RunManager) -> None:
        self.s = status
        self.gate = gate
        self.runs = runs

    def recover_at_start(self) -> None:
        """Adopt what a previous process left behind (its twin, latches and in-flight work)."""
        s = self.s
        saved = s.persisted.load()
        if saved is not None:
            s.twin = s.driver.twin_from_snapshot(saved["twin"])
            s.estop_latch = saved["estop_latch"]
            s.stale_reason = saved["stale_reason"] or RESTART_STALE
        in_doubt = set(s.ledger.mark_pending_in_doubt())
        if saved is not None:
            # Nothing is persisted while an action runs: the saved twin is the one it was
            # expanded on, which lets a read back tell how many of its operations happened.
            for action_id in in_doubt:
                s.ledger.keep_twin_before(action_id, saved["twin"])
        for run_id in s.runs.unfinished():
            doubtful = [a for a in in_doubt if a.startswith(f"{run_id}.")]
            error = DeviceError(
                Code.ACTION_IN_DOUBT if doubtful else Code.CONNECTION_LOST,
                "the server stopped during this run"
                + (f"; outcome unknown for {', '.join(sorted(doubtful))}" if doubtful else ""),
                "read_back the instrument, then decide with a person whether to continue",
                defined=False,
            ).to_payload(doubtful[0] if doubtful else None)
            s.emit(run_id, "error", error)
            s.runs.update(run_id, status="interrupted", error=error)
        s.persist()

    def _expanded(self, entry: Any) -> tuple[Any, Any, list[Any], int] | None:
        """(command, belief before, primitives, operations recorded done) of an action."""
        s = self.s
        progress = s.ledger.progress_of(entry.action_id)
        if progress is None:
            return None
        try:
            cmd = parse_command(s.driver, entry.command, dict(progress["args"]))
        except DeviceError:
            return None
        expanded = expand_before(s.driver, cmd, progress)
        if expanded is None:
            return None
        return cmd, expanded[0], expanded[1], progress["done"]

    def resume_point(self, entry: Any, seen: dict[str, Any]) -> tuple[int, int] | None:
        """How many operations of an in-doubt action happened, when the read back says so
        unambiguously: the instrument matches the belief after exactly k of them (k is the
        last recorded count or one more: an operation may have happened before its count was
        written). None: the action stays in doubt and goes to a person."""
        if self.s.estop or not seen.get("complete", True):
            return None
        expanded = self._expanded(entry)
        if expanded is None:
            return None
        _, before, prims, done = expanded
        matches = []
        for k in (done, done + 1):
            if k > len(prims):
                continue
            candidate = before.clone()
            for prim in prims[:k]:
                candidate.apply(prim)
            if not self.s.driver.reconcile(candidate, seen, None):
                matches.append(k)
        if len(matches) != 1:
            return None
        return matches[0], len(prims)

    def operations(self, entry: Any, point: tuple[int, int] | None) -> dict[str, Any] | None:
        """What of an in-doubt action happened: at its resume point when the read back
        showed it, else what its recorded progress confirms (and the next one unknown)."""
        expanded = self._expanded(entry)
        if expanded is None:
            return None
        cmd, _, prims, done = expanded
        if point is not None:
            return {**record(self.s.driver, cmd, prims, point[0]), "resolved": True}
        out = record(self.s.driver, cmd, prims, done, "unknown")
        return {**out, "remainder": None, "resolved": False}

    def _late_events(self, entry: Any, happened: int) -> None:
        """Operations a read back shows happened but whose count and events were never
        written (the process died between the instrument's effect and the record): recorded
        now, each event marked ``late``."""
        expanded = self._expanded(entry)
        if expanded is None:
            return
        _, before, prims, done = expanded
        twin = before.clone()
        for prim in prims[:done]:
            twin.apply(prim)
        log = entry.run_id or self.s.direct_log
        for index in range(done, min(happened, len(prims))):
            _, evs = twin.apply(prims[index])
            late = [{**e, "data": {**e["data"], "late": True}} for e in evs]
            self.s.record_operation(entry.action_id, index + 1, log, late)

    async def read_back(self) -> dict[str, Any]:
        """Re-read the whole instrument, adopt what it reports, clear staleness."""
        s = self.s
        seen = await s.driver.adapter.resync()
        if seen is None:
            raise DeviceError(
                Code.CONNECTION_LOST,
                "the instrument did not report its state",
                "check the connection, then read_back again",
                defined=False,
            )
        async with s.lock:
            deviations = s.driver.reconcile(s.twin, seen, None)
            for dev in deviations:
                s.emit(s.direct_log, "deviation", dev)
            was = s.stale_reason
            if not seen.get("complete", True):
                # The instrument could not report everything the twin believes: a person
                # checks it and confirms (confirm_state, approval-gated).
                s.stale_reason = (
                    "the instrument's read-back is partial: a person confirms with confirm_state"
                )
            elif not s.estop:
                s.stale_reason = None
            resolved = []
            resumable: dict[str, dict[str, int]] = {}
            operations: dict[str, Any] = {}
            for entry in s.ledger.in_doubt():
                s.ledger.annotate(
                    entry.action_id,
                    f"instrument read back at {time.time():.0f} after the outcome was lost "
                    "(restart, lost connection or interruption)",
                )
                resolved.append(entry.action_id)
                point = None if s.stale_reason else self.resume_point(entry, seen)
                s.ledger.set_resume_from(entry.action_id, None if point is None else point[0])
                if point is not None:
                    resumable[entry.action_id] = {"done": point[0], "of": point[1]}
                    self._late_events(entry, point[0])
                operations[entry.action_id] = self.operations(entry, point)
            s.persist()
        return {
            "ok": True,
            "simulated": s.simulated,
            "was_stale": was,
            "stale": s.stale_reason,
            "estop": s.estop,
            "deviations": deviations,
            "in_doubt_actions": resolved,
            # In-doubt actions whose operations done are known: asked again under the same
            # action id, they complete with the rest (never re-sending what happened).
            "resumable": resumable,
            # Per in-doubt action, which of its operations happened (per well, per channel).
            "progress": operations,
            "state": s.twin.snapshot(),
        }

    def _approved_control(self, name: str, raw: dict[str, Any]) -> tuple[str, Any]:
        """(action id, granted approval) of a control command a person approved; the gate
        refuses with APPROVAL_REQUIRED (or why not) otherwise. Not used up here: the caller
        uses it when the command acts, after its own preconditions held."""
        action_id = raw.get("action_id")
        if not isinstance(action_id, str) or not action_id:
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                f"{name} needs an action_id",
                "pass an action_id; a person approves that id",
            )
        self.gate.check(name, None, False, action_id, args_hash(name, {}), {})
        return action_id, self.s.approved.pop(action_id, None)

    def _act(self, approval: Any) -> str | None:
        """Use the approval up (single use); who granted it."""
        if approval is None:  # a policy that lets the command through without a person
            return None
        return trail.use(self.s, approval).decided_by

    async def confirm_state(self, raw: dict[str, Any]) -> dict[str, Any]:
        """A person confirms the twin matches the instrument; clears STATE_STALE (approval)."""
        s = self.s
        if s.estop:  # before the approval is even looked at: a refused call never spends it
            raise GateRefused(
                Code.ESTOP_ACTIVE,
                "the emergency stop is active",
                "a person clears it with reset_estop first",
            )
        action_id, approval = self._approved_control("confirm_state", raw)
        by = self._act(approval)
        was, s.stale_reason = s.stale_reason, None
        s.persist()
        trail.control(s, "confirm_state", {"action_id": action_id}, {"was_stale": was, "by": by})
        return {
            "ok": True,
            "simulated": s.simulated,
            "was_stale": was,
            "stale": None,
            "action_id": action_id,
            "state": s.twin.snapshot(),
        }

    async def emergency_stop(self, reason: str | None, ignored: list[str]) -> dict[str, Any]:
        """Latch the e-stop, abort the backend, cancel runs. Never gated, never refused."""
        s = self.s
        s.estop = True
        s.stale_reason = s.stale_reason or "emergency stop: re-read after reset"
        data: dict[str, object] = {"instrument": s.id, **({"reason": reason} if reason else {})}
        for run_id in self.runs.live():
            self.runs.cancelling.add(run_id)
            s.emit(run_id, "estop", data)
        s.emit(s.direct_log, "estop", data)
        await s.driver.adapter.abort()
        s.persist()
        trail.control(
            s, "emergency_stop", {"reason": reason}, {"estop_latch": s.estop_latch, "ok": True}
        )
        return {
            "ok": True,
            "simulated": s.simulated,
            "estop": True,
            "reason": reason,
            "cancelled_runs": sorted(self.runs.live()),
            "warnings": [f"ignored argument {name!r}" for name in ignored],
        }

    async def reset_estop(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Clear the e-stop latch; needs a person's approval of this very e-stop. The twin
        stays stale until read back."""
        s = self.s
        if not s.estop:
            raise GateRefused(
                Code.PRECONDITION_FAILED,
                "no emergency stop is latched: there is nothing to reset",
                "ask for a reset only while an e-stop is latched (an approval is bound to it)",
            )
        # The approval is bound to the latch it was asked for: one approval clears one e-stop.
        action_id, approval = self._approved_control("reset_estop", raw)
        by = self._act(approval)
        latch = s.estop_latch
        s.estop = False
        s.stale_reason = "emergency stop was reset: read_back before moving"
        s.emit(s.direct_log, "estop_reset", {"instrument": s.id, "action_id": action_id})
        s.persist()
        trail.control(s, "reset_estop", {"action_id": action_id}, {"estop_latch": latch, "by": by})
        return {
            "ok": True,
            "simulated": s.simulated,
            "estop": False,
            "stale": s.stale_reason,
            "action_id": action_id,
        }
