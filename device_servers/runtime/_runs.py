"""Background runs: a protocol started at once and carried out step by step, with events.

``start_run`` answers ``{run_id, status}`` at once (the same ``run_key`` gives the same run);
the steps then run in a task. A dry run simulates on a copy of the twin; a real run passes
every step through the gate again just before it acts and dispatches it at most once under
the action id ``<run_id>.<step>``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
import uuid
from typing import Any

from pydantic import BaseModel

from device_servers.contract import Protocol
from device_servers.errors import Code, DeviceError, GateRefused, ValidationFailed
from device_servers.runtime._dispatch import Dispatcher
from device_servers.runtime._gate import APPROVAL_WARNING, Gate
from device_servers.runtime._status import Status, breathe
from device_servers.runtime._trial import (
    ASSUME,
    Assume,
    Trial,
    at_step,
    command_name,
    parse_header,
    parse_step,
)
from state_store import args_hash

# Longest stretch of a dry run between two commits (and two yields to the event loop).
DRY_BATCH_S = 0.02


class RunManager:
    """The runs of one instrument: start, cancel, their tasks and event logs."""

    def __init__(self, status: Status, gate: Gate, dispatcher: Dispatcher) -> None:
        self.s = status
        self.gate = gate
        self.dispatcher = dispatcher
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.cancelling = status.cancelling  # shared: the dispatcher reports interruptions

    def live(self) -> list[str]:
        """Run ids whose tasks are still going."""
        return list(self.tasks)

    async def close(self) -> None:
        for task in list(self.tasks.values()):
            task.cancel()
        for task in list(self.tasks.values()):
            with contextlib.suppress(BaseException):
                await task

    async def start_run(
        self, protocol: Any, dry_run: bool = True, run_key: str | None = None
    ) -> dict[str, Any]:
        """Create a run and start it in the background; same run_key, same run."""
        s = self.s
        if not isinstance(dry_run, bool):
            raise ValidationFailed(Code.INVALID_ARGUMENT, "dry_run must be a boolean", "")
        proto = parse_header(protocol)
        cmds = []
        for i, step in enumerate(proto.steps):  # a long protocol never holds an e-stop back
            cmds.append(parse_step(s.driver, i, step))
            await breathe(i)
        body = proto.model_dump(mode="json")
        if run_key is not None:
            existing = s.runs.by_key(run_key)
            if existing is not None:
                if s.runs.protocol(existing["run_id"]) != body or existing["dry_run"] != dry_run:
                    raise GateRefused(
                        Code.ACTION_ID_REUSED,
                        f"run_key {run_key!r} was used for another protocol",
                        "use a new run_key for a new run",
                    )
                return {
                    "run_id": existing["run_id"],
                    "status": existing["status"],
                    "simulated": existing["simulated"],
                    "dry_run": dry_run,
                    "existing": True,
                }
        if not dry_run and any(isinstance(c, Assume) for c in cmds):
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                f"{ASSUME!r} steps only belong in simulations (dry_run=true)",
                "remove the assume steps; on a real run the instruments report what is true",
            )
        warned = await self.gate.preflight(proto, cmds, dry_run)
        if run_key is not None:
            run_id = "run-" + hashlib.sha256(f"{s.id}/{run_key}".encode()).hexdigest()[:16]
        else:
            run_id = "run-" + uuid.uuid4().hex[:16]
        simulated = dry_run or s.simulated
        s.runs.create(
            run_id,
            run_key=run_key,
            dry_run=dry_run,
            simulated=simulated,
            protocol=body,
            steps_total=len(cmds),
        )
        if not dry_run:
            s.active_run = run_id
        task = asyncio.get_running_loop().create_task(
            self._run(run_id, proto, cmds, dry_run, simulated, warned)
        )
        self.tasks[run_id] = task

        def _forget(_task: asyncio.Task[None], run: str = run_id) -> None:
            self.tasks.pop(run, None)

        task.add_done_callback(_forget)
        return {"run_id": run_id, "status": "pending", "simulated": simulated, "dry_run": dry_run}

    async def _run(
        self,
        run_id: str,
        proto: Protocol,
        cmds: list[BaseModel],
        dry_run: bool,
        simulated: bool,
        warned: dict[int, list[str]],
    ) -> None:
        s = self.s
        s.runs.update(run_id, status="running")
        done = 0
        try:
            if dry_run:
                done = await self._run_dry(run_id, cmds, warned)
            else:
                done = await self._run_real(run_id, proto, cmds)
            if run_id in self.cancelling:
                s.events.append(run_id, "run_cancelled", {"steps_done": done}, simulated)
                s.runs.update(run_id, status="cancelled", steps_done=done)
            else:
                s.events.append(
                    run_id, "protocol_completed", {"steps": done, "simulated": simulated}, simulated
                )
                s.runs.update(run_id, status="completed", steps_done=done)
        except DeviceError as exc:
            payload = exc.to_payload(exc.extra.get("action_id"))
            steps_done = int(exc.extra.get("steps_done", done))
            s.events.append(run_id, "error", payload, simulated)
            # A cancel or e-stop aborts the current operation, which then fails: the run was
            # cancelled, and the error says what became of the interrupted step.
            cancelled = run_id in self.cancelling
            if cancelled:
                s.events.append(run_id, "run_cancelled", {"steps_done": steps_done}, simulated)
            s.runs.update(
                run_id,
                status="cancelled" if cancelled else "failed",
                error=payload,
                steps_done=steps_done,
            )
        except asyncio.CancelledError:
            s.runs.update(run_id, status="interrupted")
            raise
        finally:
            if s.active_run == run_id:
                s.active_run = None
            self.cancelling.discard(run_id)

    async def _run_dry(
        self, run_id: str, cmds: list[BaseModel], warned: dict[int, list[str]]
    ) -> int:
        """Simulate on a copy of the twin. Nothing moves, so the events are committed a batch
        of steps at a time (one sync per batch instead of four or more per step: a 10,000-step
        dry run took minutes on a busy disk), yielding to the event loop between batches."""
        s = self.s
        trial = Trial.of(s.driver, s.twin)
        done = 0
        while done < len(cmds):
            if run_id in self.cancelling:
                return done
            deadline = time.monotonic() + DRY_BATCH_S
            s.conn.execute("BEGIN")
            try:
                while done < len(cmds) and time.monotonic() < deadline:
                    self._dry_step(run_id, trial, done, cmds[done], warned.get(done, []))
                    done += 1
            finally:  # what was simulated before a failing step is in the log either way
                s.runs.update(run_id, steps_done=done)
                s.conn.execute("COMMIT")
            await asyncio.sleep(0)
        return done

    def _dry_step(
        self, run_id: str, trial: Trial, i: int, cmd: BaseModel, warnings: list[str]
    ) -> None:
        s = self.s
        s.events.append(run_id, "step_started", {"step": i, "command": command_name(cmd)}, True)
        try:
            prims, events = trial.run(cmd)
        except DeviceError as exc:
            at_step(exc, i, steps_done=i)
            raise
        for ev in events:
            s.events.append(run_id, ev["type"], ev["data"], True)
        for warning in warnings:
            what = "needs_approval" if warning.startswith(APPROVAL_WARNING) else "gate"
            s.events.append(run_id, "warning", {"what": what, "message": warning}, True)
        done: dict[str, Any] = {"step": i}
        if not isinstance(cmd, Assume):
            # What the step uses and how long it takes, for the task agent's timeline.
            done.update(s.driver.footprint(trial.twin, prims))
        s.events.append(run_id, "step_completed", done, True)

    async def _run_real(self, run_id: str, proto: Protocol, cmds: list[BaseModel]) -> int:
        s = self.s
        for i, (step, cmd) in enumerate(zip(proto.steps, cmds, strict=True)):
            if run_id in self.cancelling:
                return i
            action_id = f"{run_id}.{i}"
            s.emit(
                run_id, "step_started", {"step": i, "command": step.command, "action_id": action_id}
            )
            canonical = cmd.model_dump(mode="json")
            digest = args_hash(step.command, canonical)
            try:
                # Facts other instruments control (a drawer, a lock) may have changed since
                # the run started: every step passes the gate again just before it acts.
                context = await self.gate.context(cmd)
                self.gate.check(step.command, cmd, False, action_id, digest, canonical, context)
                await self.dispatcher.execute(
                    step.command, cmd, action_id, digest, canonical, run_id, [], run_id=run_id
                )
            except DeviceError as exc:
                at_step(exc, i, step.command, steps_done=i, action_id=action_id)
                raise
            s.emit(run_id, "step_completed", {"step": i, "action_id": action_id})
            s.runs.update(run_id, steps_done=i + 1)
        return len(cmds)

    def get_run(self, run_id: str) -> dict[str, Any]:
        info = self.s.runs.get(run_id)
        if info is None:
            raise GateRefused(
                Code.RUN_NOT_FOUND,
                f"no run {run_id!r} on {self.s.id}",
                "use the run_id that start_run returned",
            )
        return info

    def run_events(self, run_id: str, since_seq: int = 0, limit: int = 100) -> dict[str, Any]:
        direct = run_id == self.s.direct_log
        status = "running" if direct else self.get_run(run_id)["status"]
        if not isinstance(since_seq, int) or since_seq < 0:
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                "since_seq must be an integer >= 0",
                "pass the next_seq of the previous call",
            )
        if not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise ValidationFailed(Code.OUT_OF_RANGE, "max must be 1 to 1000", "use max=100")
        events = self.s.events.read(run_id, since_seq, limit)
        next_seq = events[-1]["seq"] if events else since_seq
        return {"run_id": run_id, "events": events, "next_seq": next_seq, "status": status}

    async def cancel_run(self, run_id: str) -> dict[str, Any]:
        """Idempotent: a finished run is reported as it is."""
        info = self.get_run(run_id)
        if info["status"] in ("pending", "running") and run_id in self.tasks:
            self.cancelling.add(run_id)
            await self.s.driver.adapter.abort()
            task = self.tasks.get(run_id)
            if task is not None:
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(task), timeout=5)
            info = self.get_run(run_id)
        return info
