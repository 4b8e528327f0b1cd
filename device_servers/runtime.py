"""The instrument runtime every device server shares.

For each command: parse -> gate (e-stop, staleness, policy, execution setting) -> simulate on a
copy of the twin -> (dry run: answer) -> ledger intent -> adapter, primitive by primitive ->
twin applied -> read back and reconcile (deviations) -> ledger outcome. Runs are lists of
commands executed in the background with an append-only event log.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import sqlite3
import time
import uuid
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from device_servers.contract import InstrumentBase, Protocol
from device_servers.driver import Driver, Twin
from device_servers.errors import (
    Code,
    DeviceError,
    GateRefused,
    ValidationFailed,
    pydantic_detail,
)
from policies import PolicyEngine, PolicyRequest, Verdict
from state_store import (
    Approvals,
    DeviceRuns,
    EventLog,
    InstrumentState,
    Ledger,
    args_hash,
)

RESTART_STALE = "the server restarted: read_back the instrument before moving it"

# Commands every server has that are not instrument motions.
CONTROL_COMMANDS = ("reset_estop", "confirm_state")

# A simulation-only protocol step: what other instruments will have done by then.
ASSUME = "assume"


class Assume(BaseModel):
    """``{"command": "assume", "args": {...}}`` in a dry-run protocol.

    ``plate`` + ``location``: a plate arrives at (or, for ``location: null``, leaves) a place,
    moved by another instrument. ``status``: facts of other instruments, e.g.
    ``{"reader1": {"drawer_open": true}}``, for this instrument's policies.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: ClassVar[str] = "assume"

    plate: str | None = None
    location: str | None = None
    status: dict[str, dict[str, Any]] = Field(default_factory=dict)


def parse_assume(args: dict[str, Any]) -> Assume:
    try:
        return Assume.model_validate(args)
    except ValidationError as exc:
        raise ValidationFailed(
            Code.INVALID_ARGUMENT,
            f"assume: {pydantic_detail(exc)}",
            "assume takes {plate, location} and/or {status: {instrument: {fact: value}}}",
        ) from exc


class Trial:
    """A copy of the twin that a simulation runs on, plus the facts it assumes."""

    def __init__(self, twin: Twin, assume: Any = None) -> None:
        self.twin = twin
        self._assume = assume
        self.assumed: dict[str, Any] = {}

    def run(self, cmd: BaseModel) -> tuple[list[Any], list[dict[str, Any]]]:
        if isinstance(cmd, Assume):
            for instrument, facts in cmd.status.items():
                self.assumed.setdefault(instrument, {}).update(facts)
            if cmd.plate is not None:
                self.assumed.setdefault("_plates", {})[cmd.plate] = cmd.location
                if self._assume is not None:
                    self._assume(self.twin, cmd.plate, cmd.location)
            return [], []
        return self.twin.run(cmd)

    def snapshot(self, full: bool = False) -> dict[str, Any]:
        return self.twin.snapshot(full)


class InstrumentRuntime:
    """One instrument: twin, adapter, ledger, events, runs, policy, e-stop."""

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
        self.approvals = Approvals(conn)
        self.persisted = InstrumentState(conn, self.id)
        self.simulated = config.simulated
        self.twin: Twin = driver.initial_twin()
        self.stale_reason: str | None = None
        self.estop = False
        self._lock = asyncio.Lock()
        self._active_run: str | None = None
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._cancel: set[str] = set()
        self.direct_log = f"{self.id}:direct"

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Set up the instrument and recover what a previous process left behind."""
        await self.driver.adapter.setup()
        saved = self.persisted.load()
        if saved is not None:
            self.twin = self.driver.twin_from_snapshot(saved["twin"])
            self.estop = saved["estop"]
            self.stale_reason = saved["stale_reason"] or RESTART_STALE
        in_doubt = set(self.ledger.mark_pending_in_doubt())
        if saved is not None:
            # Nothing is persisted while an action runs: the saved twin is the one it was
            # expanded on, which lets a read back tell how many of its operations happened.
            for action_id in in_doubt:
                self.ledger.keep_twin_before(action_id, saved["twin"])
        for run_id in self.runs.unfinished():
            doubtful = [a for a in in_doubt if a.startswith(f"{run_id}.")]
            error = DeviceError(
                Code.ACTION_IN_DOUBT if doubtful else Code.CONNECTION_LOST,
                "the server stopped during this run"
                + (f"; outcome unknown for {', '.join(sorted(doubtful))}" if doubtful else ""),
                "read_back the instrument, then decide with a person whether to continue",
                defined=False,
            ).to_payload(doubtful[0] if doubtful else None)
            self.events.append(run_id, "error", error, self.simulated)
            self.runs.update(run_id, status="interrupted", error=error)
        self._persist()

    async def close(self) -> None:
        for task in list(self._tasks.values()):
            task.cancel()
        for task in list(self._tasks.values()):
            with contextlib.suppress(BaseException):
                await task
        await self.driver.adapter.close()

    def _persist(self) -> None:
        self.persisted.save(self.twin.snapshot(full=True), self.stale_reason, self.estop)

    # ------------------------------------------------------------------ state
    def state(self) -> dict[str, Any]:
        """The instrument's structured snapshot (the ``get_state`` tool)."""
        return {
            "instrument": self.id,
            "kind": self.driver.kind,
            "simulated": self.simulated,
            "execution_allowed": self.config.execution_allowed,
            "stale": self.stale_reason,
            "estop": self.estop,
            "busy_with_run": self._active_run,
            "in_doubt": [e.action_id for e in self.ledger.in_doubt()],
            **self.twin.snapshot(),
        }

    # ------------------------------------------------------------------ parsing & gates
    def parse(self, name: str, args: dict[str, Any]) -> BaseModel:
        model = self.driver.commands.get(name)
        if model is None:
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                f"unknown command {name!r}",
                f"commands: {', '.join(sorted(self.driver.commands))}",
            )
        try:
            return model.model_validate(args)
        except ValidationError as exc:
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                f"{name}: {pydantic_detail(exc)}",
                "fix the arguments as the tool's input schema describes",
            ) from exc

    def _gate(
        self,
        name: str,
        cmd: BaseModel | None,
        dry_run: bool,
        action_id: str | None,
        digest: str,
        args: dict[str, Any],
        context: dict[str, Any] | None = None,
    ) -> list[str]:
        """Refuse what must not run; return warnings for a dry run."""
        warnings: list[str] = []
        if not dry_run:
            if self.estop and name not in CONTROL_COMMANDS:
                raise GateRefused(
                    Code.ESTOP_ACTIVE,
                    "the emergency stop is active",
                    "a person clears it with reset_estop (needs approval), then read_back",
                )
            if self.stale_reason and name not in CONTROL_COMMANDS:
                raise GateRefused(
                    Code.STATE_STALE,
                    f"the twin is stale: {self.stale_reason}",
                    "call read_back to re-read the instrument, then retry",
                )
            if not self.config.execution_allowed:
                raise GateRefused(
                    Code.REAL_EXECUTION_DISABLED,
                    f"execution is disabled on {self.id}",
                    "use dry_run=true, or have an operator set allow_execution in the lab config",
                )
            if not action_id:
                raise ValidationFailed(
                    Code.INVALID_ARGUMENT,
                    "action_id is required when dry_run is false",
                    "pass a unique action_id derived from (run, step, "
                    "operation); reuse it only to ask again",
                )
        else:
            if self.estop:
                warnings.append("the emergency stop is active: this could not execute now")
            if self.stale_reason:
                warnings.append(
                    f"the twin is stale ({self.stale_reason}): the prediction may be wrong"
                )
        decision = self.policy.evaluate(self._policy_request(name, cmd, dry_run, context))
        if decision.verdict is Verdict.DENY:
            raise GateRefused(
                Code.POLICY_DENIED,
                decision.reason,
                decision.fix_hint,
                extra={"rule": decision.rule_id},
            )
        if decision.verdict is Verdict.REQUIRE_APPROVAL:
            if dry_run:
                warnings.append(f"needs a person's approval to execute: {decision.reason}")
            elif not self.approvals.is_granted(self.id, action_id or "", digest):
                self.approvals.request(
                    self.id, action_id or "", name, digest, args, decision.reason
                )
                raise GateRefused(
                    Code.APPROVAL_REQUIRED,
                    decision.reason,
                    f"a person approves with `labwright approve-action {self.id} {action_id}`, "
                    "then call again with the same action_id and arguments",
                    extra={"rule": decision.rule_id},
                )
        return warnings

    def _policy_request(
        self, name: str, cmd: BaseModel | None, dry_run: bool, context: dict[str, Any] | None
    ) -> PolicyRequest:
        labware = self.driver.labware_of(cmd) if cmd is not None else set()
        return PolicyRequest.for_command(self.id, name, cmd, labware, context, dry_run)

    async def _context(
        self, cmd: BaseModel, twin: Twin | None = None, assumed: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Facts the policies may need that only the instrument (or the lab) can tell.

        ``twin``: the belief the command will meet (a protocol's earlier steps simulated);
        ``assumed``: facts a simulation assumes other instruments will have made true.
        """
        read = getattr(self.driver, "policy_context", None)
        if read is None:
            return {}
        twin = self.twin if twin is None else twin
        if assumed:
            return dict(await read(cmd, twin, assumed=assumed))
        return dict(await read(cmd, twin))

    def _trial(self) -> Trial:
        return Trial(self.twin.clone(), getattr(self.driver, "assume", None))

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
                    return await self._complete(name, cmd, action_id, progress)
            replay = self._replay(action_id, digest)
            if replay is not None:
                return replay
        context = await self._context(cmd)
        warnings = self._gate(name, cmd, dry_run, action_id, digest, canonical, context)
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
        if self._active_run is not None:
            raise GateRefused(
                Code.DEVICE_BUSY,
                f"run {self._active_run} is executing",
                "wait for the run to finish, or cancel_run it",
                retriable=True,
            )
        assert action_id is not None
        return await self.execute(
            name, cmd, action_id, digest, canonical, self.direct_log, warnings
        )

    def _replay(self, action_id: str, digest: str) -> dict[str, Any] | None:
        entry = self.ledger.get(action_id)
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
        async with self._lock:
            replay = self._replay(action_id, digest)
            if replay is not None:
                return replay
            prims, _ = self.twin.clone().run(cmd)
            try:
                self.ledger.begin(action_id, name, digest, canonical, run_id)
            except sqlite3.IntegrityError:
                replay = self._replay(action_id, digest)
                if replay is not None:
                    return replay
                raise  # pragma: no cover - _replay raises for every other status
            self.ledger.clear_resume_points()
            return await self._carry_out(action_id, prims, 0, log, warnings)

    async def _carry_out(
        self, action_id: str, prims: list[Any], start: int, log: str, warnings: list[str]
    ) -> dict[str, Any]:
        """Send ``prims[start:]`` one by one (progress recorded after each), then reconcile
        and record the outcome. Called under the lock, with the ledger intent written."""
        events: list[dict[str, Any]] = []
        try:
            for index, prim in enumerate(prims[start:], start + 1):
                if self.estop:
                    raise GateRefused(
                        Code.ESTOP_ACTIVE,
                        "emergency stop during the command",
                        "a person clears it with reset_estop, then read_back",
                    )
                observed = await self.driver.adapter.execute(prim)
                _, evs = self.twin.apply(prim)
                self.ledger.progress(action_id, index)
                evs = [*evs, *(observed or [])]
                for ev in evs:
                    self.events.append(
                        log, ev["type"], {**ev["data"], "action_id": action_id}, self.simulated
                    )
                events.extend(evs)
        except DeviceError as exc:
            deviations = await self._after_failure(exc, self.driver.touched(prims), log)
            payload = exc.to_payload(action_id)
            if deviations:
                payload.setdefault("extra", {})["deviations"] = deviations
                exc.extra = {**exc.extra, "deviations": deviations}
            self.ledger.finish(action_id, "failed", {"ok": False, "error": payload})
            self._persist()
            self.events.append(log, "error", payload, self.simulated)
            raise
        deviations = await self._reconcile(self.driver.touched(prims), log)
        result = {
            "ok": True,
            "simulated": self.simulated,
            "dry_run": False,
            "action_id": action_id,
            "state": self.twin.snapshot(),
            "events": events,
            "deviations": deviations,
            "warnings": warnings,
        }
        measurements = [e["data"] for e in events if e["type"] == "reading_taken"]
        if measurements:
            result["measurements"] = measurements
        self.ledger.finish(action_id, "done", result)
        self._persist()
        return result

    def _expand_before(
        self, cmd: BaseModel, progress: dict[str, Any]
    ) -> tuple[Twin, list[Any]] | None:
        """The operations an in-doubt action was expanded into, on the belief it started from."""
        if progress["twin_before"] is None:
            return None
        try:
            before = self.driver.twin_from_snapshot(progress["twin_before"])
            prims, _ = before.clone().run(cmd)
        except (DeviceError, ValueError, KeyError):
            return None
        return before, prims

    def _resume_point(self, entry: Any, seen: dict[str, Any]) -> tuple[int, int] | None:
        """How many operations of an in-doubt action happened, when the read back says so
        unambiguously: the instrument matches the belief after exactly k of them (k is the
        last recorded count or one more: an operation may have happened before its count was
        written). None: the action stays in doubt and goes to a person."""
        progress = self.ledger.progress_of(entry.action_id)
        if progress is None or self.estop or not seen.get("complete", True):
            return None
        try:
            cmd = self.parse(entry.command, dict(progress["args"]))
        except DeviceError:
            return None
        expanded = self._expand_before(cmd, progress)
        if expanded is None:
            return None
        before, prims = expanded
        done = progress["done"]
        matches = []
        for k in (done, done + 1):
            if k > len(prims):
                continue
            candidate = before.clone()
            for prim in prims[:k]:
                candidate.apply(prim)
            if not self.driver.reconcile(candidate, seen, None):
                matches.append(k)
        if len(matches) != 1:
            return None
        return matches[0], len(prims)

    async def _complete(
        self, name: str, cmd: BaseModel, action_id: str, progress: dict[str, Any]
    ) -> dict[str, Any]:
        """Finish an in-doubt action from where a read back showed it stopped: the operations
        that happened are not sent again, the rest are sent once, under the same action id."""
        async with self._lock:
            progress = self.ledger.progress_of(action_id) or progress
            start = progress["resume_from"]
            expanded = self._expand_before(cmd, progress)
            if start is None or expanded is None or self.stale_reason or self.estop:
                replay = self._replay(action_id, args_hash(name, cmd.model_dump(mode="json")))
                assert replay is not None  # pragma: no cover - _replay raises when in doubt
                return replay
            # Used up: a crash while completing needs a new read back to find the new point.
            self.ledger.set_resume_from(action_id, None)
            self.ledger.annotate(
                action_id,
                f"completed after a restart: {start} of {len(expanded[1])} operations had "
                "happened (read back); the rest sent once",
            )
            return await self._carry_out(action_id, expanded[1], start, self.direct_log, [])

    async def _reconcile(self, touched: set[str] | None, log: str) -> list[dict[str, Any]]:
        seen = await self.driver.adapter.observe(touched)
        if seen is None:
            return []
        deviations = self.driver.reconcile(self.twin, seen, touched)
        for dev in deviations:
            self.events.append(log, "deviation", dev, self.simulated)
        return deviations

    async def _after_failure(
        self, exc: DeviceError, touched: set[str], log: str
    ) -> list[dict[str, Any]]:
        """Make the belief honest after a failed action: read back, or mark it stale."""
        if not exc.defined:
            self.stale_reason = f"{exc.code} during an action: the instrument state is unknown"
            return []
        try:
            return await self._reconcile(touched, log)
        except DeviceError:
            self.stale_reason = f"read back failed after {exc.code}"
            return []

    # ------------------------------------------------------------------ read back, e-stop
    async def read_back(self) -> dict[str, Any]:
        """Re-read the whole instrument, adopt what it reports, clear staleness."""
        seen = await self.driver.adapter.resync()
        if seen is None:
            raise DeviceError(
                Code.CONNECTION_LOST,
                "the instrument did not report its state",
                "check the connection, then read_back again",
                defined=False,
            )
        async with self._lock:
            deviations = self.driver.reconcile(self.twin, seen, None)
            for dev in deviations:
                self.events.append(self.direct_log, "deviation", dev, self.simulated)
            was = self.stale_reason
            if not seen.get("complete", True):
                # The instrument could not report everything the twin believes: a person
                # checks it and confirms (confirm_state, approval-gated).
                self.stale_reason = (
                    "the instrument's read-back is partial: a person confirms with confirm_state"
                )
            elif not self.estop:
                self.stale_reason = None
            resolved = []
            resumable: dict[str, dict[str, int]] = {}
            for entry in self.ledger.in_doubt():
                self.ledger.annotate(
                    entry.action_id,
                    f"instrument read back at {time.time():.0f} after the outcome was lost "
                    "(restart)",
                )
                resolved.append(entry.action_id)
                point = None if self.stale_reason else self._resume_point(entry, seen)
                self.ledger.set_resume_from(entry.action_id, None if point is None else point[0])
                if point is not None:
                    resumable[entry.action_id] = {"done": point[0], "of": point[1]}
            self._persist()
        return {
            "ok": True,
            "simulated": self.simulated,
            "was_stale": was,
            "stale": self.stale_reason,
            "estop": self.estop,
            "deviations": deviations,
            "in_doubt_actions": resolved,
            # In-doubt actions whose operations done are known: asked again under the same
            # action id, they complete with the rest (never re-sending what happened).
            "resumable": resumable,
            "state": self.twin.snapshot(),
        }

    async def confirm_state(self, raw: dict[str, Any]) -> dict[str, Any]:
        """A person confirms the twin matches the instrument; clears STATE_STALE (approval)."""
        action_id = raw.get("action_id")
        if not isinstance(action_id, str) or not action_id:
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                "confirm_state needs an action_id",
                "pass an action_id; a person approves that id",
            )
        digest = args_hash("confirm_state", {})
        self._gate("confirm_state", None, False, action_id, digest, {})
        self.approvals.consume(self.id, action_id)
        if self.estop:
            raise GateRefused(
                Code.ESTOP_ACTIVE,
                "the emergency stop is active",
                "a person clears it with reset_estop first",
            )
        was, self.stale_reason = self.stale_reason, None
        self._persist()
        return {
            "ok": True,
            "simulated": self.simulated,
            "was_stale": was,
            "stale": None,
            "action_id": action_id,
            "state": self.twin.snapshot(),
        }

    async def emergency_stop(self) -> dict[str, Any]:
        """Latch the e-stop, abort the backend, cancel runs. Never gated."""
        self.estop = True
        self.stale_reason = self.stale_reason or "emergency stop: re-read after reset"
        for run_id in list(self._tasks):
            self._cancel.add(run_id)
            self.events.append(run_id, "estop", {"instrument": self.id}, self.simulated)
        self.events.append(self.direct_log, "estop", {"instrument": self.id}, self.simulated)
        await self.driver.adapter.abort()
        self._persist()
        return {
            "ok": True,
            "simulated": self.simulated,
            "estop": True,
            "cancelled_runs": sorted(self._tasks),
        }

    async def reset_estop(self, raw: dict[str, Any]) -> dict[str, Any]:
        """Clear the e-stop latch; needs a person's approval. The twin stays stale."""
        action_id = raw.get("action_id")
        if not isinstance(action_id, str) or not action_id:
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                "reset_estop needs an action_id",
                "pass an action_id; a person approves that id",
            )
        digest = args_hash("reset_estop", {})
        self._gate("reset_estop", None, False, action_id, digest, {})
        # One approval clears one e-stop: a later e-stop needs a person again.
        self.approvals.consume(self.id, action_id)
        self.estop = False
        self.stale_reason = "emergency stop was reset: read_back before moving"
        self._persist()
        return {
            "ok": True,
            "simulated": self.simulated,
            "estop": False,
            "stale": self.stale_reason,
            "action_id": action_id,
        }

    # ------------------------------------------------------------------ runs
    def _parse_protocol(self, protocol: Any) -> tuple[Protocol, list[BaseModel]]:
        try:
            proto = Protocol.model_validate(protocol)
        except ValidationError as exc:
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                f"protocol: {pydantic_detail(exc)}",
                "a protocol is {name, steps: [{command, args}]}",
            ) from exc
        cmds: list[BaseModel] = []
        for i, step in enumerate(proto.steps):
            if {"action_id", "dry_run"} & step.args.keys():
                raise ValidationFailed(
                    Code.INVALID_ARGUMENT,
                    f"step {i}: action_id and dry_run belong to the run",
                    "leave them out of step arguments",
                )
            try:
                if step.command == ASSUME:
                    cmds.append(parse_assume(step.args))
                else:
                    cmds.append(self.parse(step.command, step.args))
            except DeviceError as exc:
                exc.detail = f"step {i}: {exc.detail}"
                exc.extra = {**exc.extra, "step": i}
                raise
        return proto, cmds

    def simulate_protocol(
        self, cmds: list[BaseModel], twin: Twin | None = None
    ) -> tuple[Twin, list[tuple[int, list[dict[str, Any]]]]]:
        """Dry-run a protocol on a copy of the twin; raise the first failing step's error."""
        trial = Trial((twin or self.twin).clone(), getattr(self.driver, "assume", None))
        per_step = []
        for i, cmd in enumerate(cmds):
            try:
                _, events = trial.run(cmd)
            except DeviceError as exc:
                exc.detail = f"step {i} ({cmd.__class__.__name__}): {exc.detail}"
                exc.extra = {**exc.extra, "step": i}
                raise
            per_step.append((i, events))
        return trial.twin, per_step

    async def start_run(
        self, protocol: Any, dry_run: bool = True, run_key: str | None = None
    ) -> dict[str, Any]:
        """Create a run and start it in the background; same run_key, same run."""
        if not isinstance(dry_run, bool):
            raise ValidationFailed(Code.INVALID_ARGUMENT, "dry_run must be a boolean", "")
        proto, cmds = self._parse_protocol(protocol)
        body = proto.model_dump(mode="json")
        if run_key is not None:
            existing = self.runs.by_key(run_key)
            if existing is not None:
                if self.runs.protocol(existing["run_id"]) != body or existing["dry_run"] != dry_run:
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
        # Each step's facts are those its earlier steps leave (a plate locked by step 0).
        trial: Trial | None = self._trial()
        for i, (step, cmd) in enumerate(zip(proto.steps, cmds, strict=True)):
            if isinstance(cmd, Assume):
                if trial is not None:
                    trial.run(cmd)
                continue
            digest = args_hash(step.command, cmd.model_dump(mode="json"))
            try:
                context = await self._context(
                    cmd, trial.twin if trial else None, trial.assumed if trial else None
                )
                self._gate(step.command, cmd, True, None, digest, {}, context)
            except DeviceError as exc:
                exc.detail = f"step {i}: {exc.detail}"
                exc.extra = {**exc.extra, "step": i}
                raise
            if trial is not None:
                try:
                    trial.run(cmd)
                except DeviceError:
                    trial = None  # the simulation reports it; later steps see the belief
            if (
                not dry_run
                and self.policy.evaluate(
                    self._policy_request(step.command, cmd, False, context)
                ).verdict
                is not Verdict.ALLOW
            ):
                raise GateRefused(
                    Code.APPROVAL_REQUIRED,
                    f"step {i} ({step.command}) needs a person's approval",
                    "execute that step as its own command so a person can approve its action_id",
                )
        if not dry_run:
            self._gate("start_run", None, False, "run", "", {})
            if self._active_run is not None:
                raise GateRefused(
                    Code.DEVICE_BUSY,
                    f"run {self._active_run} is executing",
                    "wait for it or cancel_run it",
                    retriable=True,
                )
            self.simulate_protocol(cmds)  # refuse before anything moves
        if run_key is not None:
            run_id = "run-" + hashlib.sha256(f"{self.id}/{run_key}".encode()).hexdigest()[:16]
        else:
            run_id = "run-" + uuid.uuid4().hex[:16]
        simulated = dry_run or self.simulated
        self.runs.create(
            run_id,
            run_key=run_key,
            dry_run=dry_run,
            simulated=simulated,
            protocol=body,
            steps_total=len(cmds),
        )
        if not dry_run:
            self._active_run = run_id
        task = asyncio.get_running_loop().create_task(
            self._run(run_id, proto, cmds, dry_run, simulated)
        )
        self._tasks[run_id] = task

        def _forget(_task: asyncio.Task[None], run: str = run_id) -> None:
            self._tasks.pop(run, None)

        task.add_done_callback(_forget)
        return {"run_id": run_id, "status": "pending", "simulated": simulated, "dry_run": dry_run}

    async def _run(
        self, run_id: str, proto: Protocol, cmds: list[BaseModel], dry_run: bool, simulated: bool
    ) -> None:
        self.runs.update(run_id, status="running")
        done = 0
        try:
            if dry_run:
                done = await self._run_dry(run_id, cmds)
            else:
                done = await self._run_real(run_id, proto, cmds)
            if run_id in self._cancel:
                self.events.append(run_id, "run_cancelled", {"steps_done": done}, simulated)
                self.runs.update(run_id, status="cancelled", steps_done=done)
            else:
                self.events.append(
                    run_id, "protocol_completed", {"steps": done, "simulated": simulated}, simulated
                )
                self.runs.update(run_id, status="completed", steps_done=done)
        except DeviceError as exc:
            payload = exc.to_payload(exc.extra.get("action_id"))
            steps_done = int(exc.extra.get("steps_done", done))
            self.events.append(run_id, "error", payload, simulated)
            # A cancel or e-stop aborts the current operation, which then fails: the run was
            # cancelled, and the error says what became of the interrupted step.
            cancelled = run_id in self._cancel
            if cancelled:
                self.events.append(run_id, "run_cancelled", {"steps_done": steps_done}, simulated)
            self.runs.update(
                run_id,
                status="cancelled" if cancelled else "failed",
                error=payload,
                steps_done=steps_done,
            )
        except asyncio.CancelledError:
            self.runs.update(run_id, status="interrupted")
            raise
        finally:
            if self._active_run == run_id:
                self._active_run = None
            self._cancel.discard(run_id)

    async def _run_dry(self, run_id: str, cmds: list[BaseModel]) -> int:
        trial = self._trial()
        for i, cmd in enumerate(cmds):
            if run_id in self._cancel:
                return i
            name = getattr(type(cmd), "name", type(cmd).__name__)
            self.events.append(run_id, "step_started", {"step": i, "command": name}, True)
            try:
                _, events = trial.run(cmd)
            except DeviceError as exc:
                exc.detail = f"step {i}: {exc.detail}"
                exc.extra = {**exc.extra, "step": i, "steps_done": i}
                raise
            for ev in events:
                self.events.append(run_id, ev["type"], ev["data"], True)
            self.events.append(run_id, "step_completed", {"step": i}, True)
            self.runs.update(run_id, steps_done=i + 1)
            await asyncio.sleep(0)
        return len(cmds)

    async def _run_real(self, run_id: str, proto: Protocol, cmds: list[BaseModel]) -> int:
        for i, (step, cmd) in enumerate(zip(proto.steps, cmds, strict=True)):
            if run_id in self._cancel:
                return i
            action_id = f"{run_id}.{i}"
            self.events.append(
                run_id,
                "step_started",
                {"step": i, "command": step.command, "action_id": action_id},
                self.simulated,
            )
            canonical = cmd.model_dump(mode="json")
            digest = args_hash(step.command, canonical)
            try:
                # Facts other instruments control (a drawer, a lock) may have changed since
                # the run started: every step passes the gate again just before it acts.
                context = await self._context(cmd)
                self._gate(step.command, cmd, False, action_id, digest, canonical, context)
                await self.execute(
                    step.command,
                    cmd,
                    action_id,
                    digest,
                    canonical,
                    run_id,
                    [],
                    run_id=run_id,
                )
            except DeviceError as exc:
                exc.detail = f"step {i} ({step.command}): {exc.detail}"
                exc.extra = {**exc.extra, "step": i, "steps_done": i, "action_id": action_id}
                raise
            self.events.append(
                run_id, "step_completed", {"step": i, "action_id": action_id}, self.simulated
            )
            self.runs.update(run_id, steps_done=i + 1)
        return len(cmds)

    def get_run(self, run_id: str) -> dict[str, Any]:
        info = self.runs.get(run_id)
        if info is None:
            raise GateRefused(
                Code.RUN_NOT_FOUND,
                f"no run {run_id!r} on {self.id}",
                "use the run_id that start_run returned",
            )
        return info

    def run_events(self, run_id: str, since_seq: int = 0, limit: int = 100) -> dict[str, Any]:
        if run_id != self.direct_log:
            info = self.get_run(run_id)
            status = info["status"]
        else:
            status = "running"
        if not isinstance(since_seq, int) or since_seq < 0:
            raise ValidationFailed(
                Code.INVALID_ARGUMENT,
                "since_seq must be an integer >= 0",
                "pass the next_seq of the previous call",
            )
        if not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise ValidationFailed(Code.OUT_OF_RANGE, "max must be 1 to 1000", "use max=100")
        events = self.events.read(run_id, since_seq, limit)
        next_seq = events[-1]["seq"] if events else since_seq
        return {"run_id": run_id, "events": events, "next_seq": next_seq, "status": status}

    async def cancel_run(self, run_id: str) -> dict[str, Any]:
        """Idempotent: a finished run is reported as it is."""
        info = self.get_run(run_id)
        if info["status"] in ("pending", "running") and run_id in self._tasks:
            self._cancel.add(run_id)
            await self.driver.adapter.abort()
            task = self._tasks.get(run_id)
            if task is not None:
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(task), timeout=5)
            info = self.get_run(run_id)
        return info
