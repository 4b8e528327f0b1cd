"""The operations a person has on the lab's runs: one implementation, two clients.

The CLI and the web server (HTTP API and page) call these and nothing else to read or change
a run. Every write names a :class:`~state_store.people.Person` and checks their role first;
every decision reaches the audit log with that person's name (``TaskRunner.answer_of``).

Errors are :class:`OperationError` with a stable code (and the HTTP status the web maps it
to): RUN_NOT_FOUND, NOT_WAITING (the run is not asking that question), APPROVAL_STALE (the
approval names a plan, simulation, policy or lab state other than the one now shown),
RUN_BUSY (the run is being driven), INVALID_ARGUMENT, plus the people errors
UNAUTHENTICATED and FORBIDDEN.

Driving: with ``background=True`` (the web) a write that moves a run on returns at once and
the graph runs in a task of this process; runs are driven one at a time (a lab-wide lock), the
e-stop never waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from state_store import ApprovalError, Approvals, AuditLog, TaskRuns
from state_store.people import People, Person
from state_store.task_runs import STATUSES

if TYPE_CHECKING:  # the runner (LangGraph, MCP clients) is loaded by whoever makes one
    from agents.task.runner import Outcome, TaskRunner

DECISIONS = ("retry", "skip", "replan", "abort")
LAB = "lab"  # the audit log's run id for what is not one run's: people, e-stops, grants
_HTTP = {"RUN_NOT_FOUND": 404, "NOT_WAITING": 409, "APPROVAL_STALE": 409, "RUN_BUSY": 409}
_HTTP |= {"ACTION_ID_REUSED": 409, "INVALID_ARGUMENT": 400}
_HTTP |= {"UNAUTHENTICATED": 401, "FORBIDDEN": 403}


class OperationError(Exception):
    """A refused operation: ``code`` is stable, ``status`` is its HTTP status."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.status = _HTTP.get(code, 400)


class Operations:
    """Reads and decisions on one lab's runs, over one :class:`TaskRunner`."""

    def __init__(self, runner: TaskRunner, people: People, *, background: bool = False) -> None:
        self.runner = runner
        self.people = people
        self.background = background
        self.runs = TaskRuns(runner.conn)
        self.audit: AuditLog = runner.audit
        self._lock = asyncio.Lock()
        self._busy: dict[str, asyncio.Task[Any]] = {}
        self.listeners: list[Callable[[str, dict[str, Any]], None]] = []

    # ------------------------------------------------------------------ reads
    def list_runs(self, limit: int = 50, status: str | None = None) -> list[dict[str, Any]]:
        if status is not None and status not in STATUSES:
            raise OperationError("INVALID_ARGUMENT", f"status is one of {sorted(STATUSES)}")
        return [
            {
                "run_id": r.run_id,
                "request": r.request,
                "status": r.status,
                "created_at": r.created_at,
                "updated_at": r.updated_at,
                "summary": r.summary,
            }
            for r in self.runs.list(limit=max(1, min(limit, 500)), status=status)  # type: ignore[arg-type]
        ]

    async def run(self, run_id: str) -> dict[str, Any]:
        """Everything known of a run: its row, where it stands, its question, plan, simulation
        (with the per-step predictions), observations, deviations, approval and report."""
        row = self._row(run_id)
        out = await self.runner.outcome(run_id)
        values = out.values or {}
        return {
            "run_id": run_id,
            "request": row.request,
            "status": self._status(run_id, out),
            "created_at": row.created_at,
            "updated_at": row.updated_at,
            "question": out.interrupt,
            "plan": self._plan(values.get("plan_ref")) or row.plan,
            "previous_plan": self._plan(values.get("previous_plan_ref")),
            "simulation": self.runner.records.get(values.get("simulation_ref")),
            "step": values.get("step"),
            "observations": list(self.runner.records.observations(run_id)),
            "deviations": values.get("deviations", []),
            "approval": values.get("approval"),
            "voided": values.get("voided"),
            "report": out.report or row.report,
            "driving": run_id in self._busy,
        }

    async def status(self, run_id: str) -> dict[str, Any]:
        """Where a run stands, in brief: status, next step, steps, what it asks, if anything."""
        self._known(run_id)
        out = await self.runner.outcome(run_id)
        values = out.values or {}
        plan = self._plan(values.get("plan_ref")) or {}
        status = self._status(run_id, out)
        steps = len(plan.get("steps") or [])
        passed = steps if status == "done" else sum((values.get("lanes") or {}).values())
        return {
            "run_id": run_id,
            "status": status,
            "step": values.get("step"),
            "steps": steps,
            "done": passed if values.get("approval") or status == "done" else 0,
            "asks": (out.interrupt or {}).get("kind"),
            "driving": run_id in self._busy,
        }

    async def lab_states(self) -> dict[str, dict[str, Any]]:
        """Every instrument's twin as its server reports it now."""
        agents = self.runner.context.agents
        return {i: await a.state() for i, a in agents.items()}

    def approved_states(self, run_id: str) -> dict[str, dict[str, Any]] | None:
        """The instruments' states the run's approval was confirmed on (from the audit log)."""
        for entry in reversed(self.audit.entries(run_id)):
            if entry.tool == "approval_confirmed" and isinstance(entry.state_before, dict):
                return dict(entry.state_before)
        return None

    def events(self, run_id: str, since: int = 0) -> list[dict[str, Any]]:
        """The run's audit entries after ``since`` (its seq), oldest first. ``lab`` names the
        lab's own entries (people, e-stops, instrument approvals)."""
        if run_id != LAB:
            self._known(run_id)
        return [
            {
                "seq": e.seq,
                "ts": e.ts,
                "agent": e.agent,
                "tool": e.tool,
                "outcome": e.outcome,
                "note": e.decision_note,
                "args": e.args,
            }
            for e in self.audit.entries(run_id)
            if e.seq > since
        ]

    def verify_audit(self, run_id: str | None = None) -> dict[str, Any]:
        if run_id not in (None, LAB):
            self._known(run_id)
        report = self.audit.verify(run_id)
        return {
            "run_id": run_id,
            "ok": report.ok,
            "entries": report.entries,
            "checked": report.checked,
            "problems": [
                {"seq": p.seq, "kind": p.kind, "detail": p.detail, "run_id": p.run_id}
                for p in report.problems
            ],
        }

    def pending_actions(self) -> list[dict[str, Any]]:
        """Instrument actions waiting for a person's approval: each record whole."""
        return [r.as_dict() for r in Approvals(self.runner.lab_conn).pending()]

    # ------------------------------------------------------------------ writes
    async def create(
        self, person: Person, request: str, run_id: str | None = None, *, sequential: bool = False
    ) -> Any:
        """Plan, simulate and (unless refused) leave a new run waiting for approval."""
        person.require("operate")
        request = request.strip() if isinstance(request, str) else ""
        if not request:
            raise OperationError("INVALID_ARGUMENT", "the request is empty")
        if len(request) > 4000:
            raise OperationError("INVALID_ARGUMENT", "the request is longer than 4000 characters")
        if run_id is not None and self.runs.exists(run_id):
            raise OperationError("INVALID_ARGUMENT", f"run {run_id} exists")
        run_id = self.runner.record(request, run_id)
        self.audit.append(
            run_id=run_id,
            agent=f"person:{person.label}",
            tool="create_run",
            args={"request": request, "sequential": sequential},
            decision_note="asked for a run",
        )
        start = functools.partial(self.runner.start, request, run_id, sequential=sequential)
        return await self._go(run_id, start)

    async def approve(
        self,
        person: Person,
        run_id: str,
        basis: dict[str, Any] | None = None,
        *,
        drive: bool = True,
    ) -> Any:
        """Approve the plan shown (``basis``: the question's hashes the person saw).

        With ``drive=False`` the signed approval is only recorded: whoever resumes the run
        next (another process, another host on the same database) takes it and goes on.
        """
        person.require("approve")
        question = await self._question(run_id, "approval")
        if basis is not None and basis != question.get("basis"):
            raise OperationError(
                "APPROVAL_STALE",
                f"run {run_id} shows another plan or state now: reload it and approve again",
            )
        answer = {"decision": "approve", "basis": question.get("basis")}
        if not drive:
            signed = await self.runner.answer_of(run_id, answer, person)
            self.runner.answers.put(run_id, signed)
            return await self.runner.outcome(run_id)
        return await self._resume(person, run_id, answer)

    async def reject(self, person: Person, run_id: str, reason: str) -> Any:
        person.require("operate")
        await self._question(run_id, "approval")
        reason = (reason or "").strip()
        if not reason:
            raise OperationError("INVALID_ARGUMENT", "a rejection needs a reason")
        return await self._resume(person, run_id, {"decision": "reject", "reason": reason})

    async def edit(self, person: Person, run_id: str, text: str) -> Any:
        """Ask for another plan: the run reads ``text`` as its request and asks again."""
        person.require("operate")
        await self._question(run_id, "approval")
        text = (text or "").strip()
        if not text:
            raise OperationError("INVALID_ARGUMENT", "an edit needs the new request")
        return await self._resume(person, run_id, {"decision": "edit", "text": text})

    async def answer(self, person: Person, run_id: str, decision: str) -> Any:
        """Answer an escalation: retry, skip or replan (approvers: an instrument moves again,
        or a new remainder is planned for approval), abort."""
        if decision not in DECISIONS:
            raise OperationError("INVALID_ARGUMENT", f"decision is one of {', '.join(DECISIONS)}")
        person.require("operate" if decision == "abort" else "approve")
        await self._question(run_id, "escalation")
        return await self._resume(person, run_id, {"decision": decision})

    def grant_action(
        self, person: Person, instrument: str, action_id: str, args_hash: str | None = None
    ) -> dict[str, Any]:
        """Grant the pending record whose ``args_hash`` was shown (else ACTION_ID_REUSED)."""
        try:
            record = Approvals(self.runner.lab_conn).grant(instrument, action_id, person, args_hash)
        except ApprovalError as exc:  # NOT_WAITING, or ACTION_ID_REUSED: another was shown
            raise OperationError(exc.code, str(exc)) from exc
        self.audit.append(
            run_id=LAB,
            agent=f"person:{person.label}",
            tool="approve_action",
            args={"instrument": instrument, "action_id": action_id, "args_hash": args_hash},
            decision_note=f"granted {record.command}",
        )
        return record.as_dict()

    async def approve_action(self, person: Person, run_id: str) -> Any:
        """Grant what an instrument asked a person to approve for this run's step, go on."""
        person.require("approve")
        question = await self._question(run_id, "escalation")
        obs = question.get("observation") or {}
        if question.get("about") != "approval_required":
            raise OperationError("NOT_WAITING", f"run {run_id} is not waiting on an instrument")
        asked = (obs.get("instrument"), obs.get("action_id"))
        if not any((r["instrument"], r["action_id"]) == asked for r in self.pending_actions()):
            raise OperationError("NOT_WAITING", f"no pending instrument approval for {run_id}")
        extra = (obs.get("error") or {}).get("extra") or {}
        shown = (extra.get("approval") or {}).get("args_hash")  # what the question showed
        granted = [self.grant_action(person, str(asked[0]), str(asked[1]), shown)]
        answer = {"decision": "approved", "granted": [r["action_id"] for r in granted]}
        return await self._resume(person, run_id, answer)

    async def resume(self, person: Person, run_id: str) -> Any:
        """Continue a run after a crash (its approval and answers are in its checkpoints)."""
        person.require("operate")
        self._known(run_id)
        if run_id in self._busy:
            raise OperationError("RUN_BUSY", f"run {run_id} is being driven")
        self.audit.append(
            run_id=run_id,
            agent=f"person:{person.label}",
            tool="resume",
            args={},
            decision_note="continue the run from its checkpoints",
        )
        return await self._go(run_id, lambda: self.runner.resume(run_id))

    async def estop(self, person: Person, reason: str = "") -> dict[str, Any]:
        """Stop every instrument now. Anyone identified may; it never waits for a run."""
        person.require("estop")
        agents = self.runner.context.agents

        async def stop(inst: str) -> tuple[str, bool]:
            try:
                result = await agents[inst].call("emergency_stop")
            except Exception:  # an unreachable instrument must not keep the others going
                return inst, False
            return inst, bool(result.get("ok"))

        stopped = dict(await asyncio.gather(*(stop(i) for i in agents)))
        self.audit.append(
            run_id=LAB,
            agent=f"person:{person.label}",
            tool="emergency_stop",
            args={"reason": reason, "instruments": sorted(agents)},
            decision_note=reason or "e-stop pressed",
            result=stopped,
        )
        self._tell("estop", {"by": person.label, "stopped": stopped})
        return {"stopped": stopped}

    # ------------------------------------------------------------------ internals
    def _row(self, run_id: str) -> Any:
        row = self.runs.get(run_id)
        if row is None:
            raise OperationError("RUN_NOT_FOUND", f"no task run {run_id!r}")
        return row

    def _known(self, run_id: str) -> None:
        """:meth:`_row` without decoding the run (a long run's row holds its whole plan)."""
        if not self.runs.exists(run_id):
            raise OperationError("RUN_NOT_FOUND", f"no task run {run_id!r}")

    def _plan(self, ref: str | None) -> dict[str, Any] | None:
        """A plan from the run records by its reference (None for None)."""
        return None if not ref else self.runner.records.plan(ref).model_dump(mode="json")

    def _status(self, run_id: str, out: Outcome) -> str:
        """The runs table's vocabulary: planning, waiting_approval, running, ..., cancelled."""
        from agents.task.runner import run_status

        if run_id in self._busy:
            return "running" if out.values else "planning"
        if out.status == "unknown":  # no checkpoint yet
            row = self.runs.get(run_id)
            return row.status if row is not None else "planning"
        return run_status(out.status)

    async def _question(self, run_id: str, kind: str) -> dict[str, Any]:
        self._known(run_id)
        if run_id in self._busy:
            raise OperationError("RUN_BUSY", f"run {run_id} is being driven; wait for its question")
        out = await self.runner.outcome(run_id)
        if not out.waiting or (out.interrupt or {}).get("kind") != kind:
            raise OperationError(
                "NOT_WAITING", f"run {run_id} is not waiting for {kind} (status {out.status})"
            )
        return dict(out.interrupt or {})

    async def _resume(self, person: Person, run_id: str, answer: dict[str, Any]) -> Any:
        return await self._go(run_id, lambda: self.runner.resume(run_id, answer, person))

    async def _go(self, run_id: str, drive: Callable[[], Awaitable[Outcome]]) -> Any:
        """Drive the run now (CLI) or in a task of this process (web)."""

        async def locked() -> Outcome:
            async with self._lock:
                self._tell("driving", {"run_id": run_id})
                try:
                    return await drive()
                finally:
                    self._busy.pop(run_id, None)
                    self._tell("settled", {"run_id": run_id})

        if not self.background:
            self._busy[run_id] = asyncio.current_task()  # type: ignore[assignment]
            return await locked()
        task = asyncio.create_task(locked())
        self._busy[run_id] = task
        return {"run_id": run_id, "accepted": True}

    def _tell(self, what: str, data: dict[str, Any]) -> None:
        for listener in list(self.listeners):
            with contextlib.suppress(Exception):
                listener(what, data)

    async def shutdown(self) -> None:
        """Stop driving runs in the background; each resumes from its checkpoints later
        (`labwright resume RUN`): a step cut short is an in-doubt action, never repeated."""
        tasks = [t for t in self._busy.values() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
