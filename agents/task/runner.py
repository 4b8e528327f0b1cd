"""Run the task graph against a lab: device agents on MCP sessions, checkpoints in SQLite.

One :class:`TaskRunner` per process. It opens ONE MCP session per instrument (stdio
subprocesses for local instruments, streamable HTTP for remote ones), the lab's checkpoint
store, and drives runs: start one, resume one with a person's answer, or resume one after a
crash. Whatever process resumes a run rebuilds this context; the state is in the checkpoints.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.mcp_client import client_for
from agents.task.sessions import OnFirstUse, Sessions
from state_store import AuditLog, TaskRuns, connect
from state_store.answers import PendingAnswers
from state_store.people import Person, local_operator
from state_store.signoff import ApprovalSigner
from state_store.task_db import open_task_db

if TYPE_CHECKING:
    from agents.device.agent import DeviceAgent
    from agents.task.planning.models import Planner
    from device_servers.contract import InstrumentBase

# The device agents, their policies and the graph (pydantic models, the MCP types, LangGraph)
# are imported in TaskRunner.__aenter__, once the servers a resumed run needs are starting:
# a resume's servers start while this process imports them, not after.

WAITING = {"approval": "waiting_approval", "escalation": "waiting_person"}
RECURSION_FLOOR = 1_000
SUPERSTEPS_PER_STEP = 10


@dataclass
class Outcome:
    """Where a run stands after the graph stopped: done, refused, or waiting for a person."""

    run_id: str
    status: str
    interrupt: dict[str, Any] | None = None
    report: dict[str, Any] | None = None
    values: dict[str, Any] | None = None

    @property
    def waiting(self) -> bool:
        return self.interrupt is not None


class TaskRunner:
    """Device agents + checkpointed task graph for one lab."""

    def __init__(
        self,
        instruments: list[InstrumentBase],
        config_path: Path,
        db_path: Path,
        planner: Planner,
        *,
        env: dict[str, str] | None = None,
        model: str | None = None,
        progress: Callable[[str, dict[str, Any]], None] | None = None,
        state_url: str | None = None,
        warm: list[str] | None = None,
    ) -> None:
        self.instruments = instruments
        self.config_path = config_path
        self.db_path = db_path
        self.planner = planner
        self.env = env
        self.model = model
        self.progress = progress
        self.state_url = state_url
        # The lab's SQLite database: what the instrument servers share with a person's tools
        # (their approval requests). The task side's own records (runs, audit, people, the
        # sign-off key, checkpoints) are there too, or in PostgreSQL when ``state_url`` says.
        self.lab_conn = connect(db_path)
        self.conn = open_task_db(state_url, db_path) if state_url else self.lab_conn
        if not state_url:
            # The task side's records need no fsync per row: see __aenter__.
            self.conn.execute("PRAGMA synchronous=NORMAL")
        from agents.task.records import RunRecords

        self.runs = TaskRuns(self.conn)
        self.audit = AuditLog(self.conn)
        self.records = RunRecords(self.conn)
        self.signer = ApprovalSigner(self.conn)
        self.answers = PendingAnswers(self.conn)
        self.warm = list(warm or [])  # sessions to start at once (a resumed run's instruments)
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> TaskRunner:
        client = client_for(
            self.instruments, self.config_path, self.env, state_dir=self.db_path.parent
        )
        self.sessions = Sessions(client, self._stack)
        # Their servers start while this process imports and compiles the graph below.
        await self.sessions.warm(self.warm)
        from agents.device.agent import DeviceAgent
        from agents.task.state import TaskContext
        from policies import build_engine

        agents: dict[str, DeviceAgent] = {}
        policies = {}
        for inst in self.instruments:
            kind = getattr(inst, "kind", "?")
            policy = build_engine(
                kind, inst.policy.rules_file, inst.policy.rules, inst.policy.protected_labware
            )
            policies[inst.id] = policy
            session = OnFirstUse(functools.partial(self.sessions.get, inst.id))
            agents[inst.id] = DeviceAgent(
                inst.id, kind, session, policy, audit=self.audit, progress=self.progress
            )
        from agents.task.graph import compile_graph  # LangGraph: after the servers started

        self.graph = compile_graph(await self._checkpointer())
        _freeze_once()
        self.context = TaskContext(
            agents=agents,
            planner=self.planner,
            policies=policies,
            audit=self.audit,
            model=self.model,
            progress=self.progress,
            records=self.records,
            signer=self.signer,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def _checkpointer(self) -> Any:
        """LangGraph's checkpoints: in PostgreSQL when configured, else the lab's SQLite."""
        if self.state_url:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            saver = await self._stack.enter_async_context(
                AsyncPostgresSaver.from_conn_string(self.state_url)
            )
            await saver.setup()
            return saver
        import aiosqlite

        from agents.task.checkpointer import CompactSqliteSaver

        conn = await self._stack.enter_async_context(aiosqlite.connect(str(self.db_path)))
        # At-most-once lives in the servers' ledgers (synchronous=FULL). Checkpoints survive a
        # process crash in WAL mode with NORMAL sync; a step re-run after losing one asks the
        # same action id again and gets the recorded answer.
        await conn.execute("PRAGMA synchronous=NORMAL")
        return CompactSqliteSaver(conn)

    async def open_all(self) -> None:
        """Start every instrument's server now (they start side by side)."""
        await self.sessions.open_all(inst.id for inst in self.instruments)

    async def restart_server(self, instrument: str) -> None:
        """Start one instrument's server again (its process died) and bind its device agent
        to the new session. The new server recovers on its own start: its twin is stale and
        an action left pending is in doubt until the instrument is read back."""
        await self.sessions.restart(instrument)
        self.context.agents[instrument].forget_state()

    async def _superstep_budget(self, config: dict[str, Any]) -> int:
        """Supersteps this call of the graph may take: enough for every step of the run's
        plan (as checkpointed; a run not planned yet stops at its approval)."""
        snap = await self.graph.aget_state(config)
        ref = (snap.values or {}).get("plan_ref")
        return _superstep_budget_for(len(self.records.plan(ref).steps) if ref else 0)

    # ------------------------------------------------------------------ runs
    @staticmethod
    def new_run_id() -> str:
        return f"task-{time.strftime('%Y%m%d-%H%M%S')}-{uuid.uuid4().hex[:6]}"

    def record(self, request: str, run_id: str | None = None) -> str:
        """The run's row in the runs table (status planning); its id."""
        run_id = run_id or self.new_run_id()
        self.runs.create(
            request, run_id=run_id, planner=planner_name(self.planner), model=self.model
        )
        return run_id

    async def start(
        self, request: str, run_id: str | None = None, *, sequential: bool = False
    ) -> Outcome:
        """Plan, simulate and drive a new run (recorded first unless it already is). Steps on
        different instruments run at the same time when they do not depend on each other,
        unless ``sequential``: then strictly one after another, in plan order."""
        if run_id is None or not self.runs.exists(run_id):
            run_id = self.record(request, run_id)
        # Kept where a resume finds it if the run dies before its first checkpoint.
        self.audit.append(
            run_id=run_id, agent="person", tool="run_options", args={"sequential": sequential}
        )
        return await self._drive(run_id, _first(run_id, request, sequential))

    async def resume(
        self, run_id: str, answer: dict[str, Any] | None = None, person: Person | None = None
    ) -> Outcome:
        """Continue a run: with a person's answer to its question, or after a crash.

        The answer is recorded as ``person``'s (the local operator when not given); a plan's
        approval is signed over the basis the person was shown (``answer["basis"]``, else the
        question's own), and checked again before the first step moves anything.
        """
        if answer is not None:
            answer = await self.answer_of(run_id, answer, person or local_operator())
        elif (await self.outcome(run_id)).waiting:
            # An answer recorded earlier (`labwright approve --no-run`, maybe on another host).
            answer = self.answers.take(run_id)
        if answer is None:
            snap = await self.graph.aget_state({"configurable": {"thread_id": run_id}})
            run = None if snap.values else self.runs.get(run_id)
            if run is not None:
                # Crashed before the first checkpoint: nothing was done, start from the request.
                options = [e.args for e in self.audit.entries(run_id) if e.tool == "run_options"]
                sequential = bool(options and options[0].get("sequential"))
                return await self._drive(run_id, _first(run_id, run.request, sequential))
        from langgraph.types import Command

        return await self._drive(run_id, None if answer is None else Command(resume=answer))

    async def answer_of(
        self, run_id: str, answer: dict[str, Any], person: Person
    ) -> dict[str, Any]:
        """``answer`` as ``person``'s, audited; an approval of a plan gets its signed record."""
        answer = {**answer, "by": person.label}
        current = await self.outcome(run_id)
        question = current.interrupt or {}
        shown = answer.get("basis") or question.get("basis")
        if question.get("kind") == "approval" and answer.get("decision") == "approve" and shown:
            # A plan's approval (a replanned remainder's question carries no basis yet).
            answer["record"] = self.signer.sign(
                run_id=run_id, person=person.name, role=person.role, via=person.via, basis=shown
            )
        self.audit.append(
            run_id=run_id,
            agent=f"person:{person.label}",
            tool="answer",
            args=answer,
            decision_note=": ".join(
                str(v)
                for v in (answer.get("decision"), answer.get("reason") or answer.get("text"))
                if v
            ),
        )
        return answer

    async def outcome(self, run_id: str) -> Outcome:
        """Where a run stands, from its checkpoints (no instrument is touched)."""
        config = {"configurable": {"thread_id": run_id}}
        snap = await self.graph.aget_state(config)
        values = dict(snap.values or {})
        for task in snap.tasks:
            for intr in task.interrupts:
                payload = dict(intr.value)
                return Outcome(
                    run_id,
                    WAITING.get(payload.get("kind", ""), "waiting_person"),
                    interrupt=payload,
                    values=values,
                )
        if snap.next:
            return Outcome(run_id, "interrupted", values=values)
        return Outcome(
            run_id, values.get("status", "unknown"), report=values.get("report"), values=values
        )

    async def _drive(self, run_id: str, graph_input: Any) -> Outcome:
        from agents.task.graph import DURABILITY

        config: dict[str, Any] = {"configurable": {"thread_id": run_id}}
        config["recursion_limit"] = await self._superstep_budget(config)
        self.runs.write(run_id, status="running")
        async for _ in self.graph.astream(
            graph_input,
            config,
            context=self.context,
            durability=DURABILITY,
            stream_mode="updates",
        ):
            pass
        out = await self.outcome(run_id)
        values = out.values or {}
        fields: dict[str, Any] = {"status": run_status(out.status)}
        if values.get("plan_ref") and (out.status == "waiting_approval" or not out.waiting):
            # A plan changes only before an approval; kept with the run where people list it.
            plan = self.records.plan(values["plan_ref"])
            fields["plan"] = plan.model_dump(mode="json")
            fields["summary"] = plan.summary
        if out.report is not None:
            fields["report"] = out.report
        self.runs.write(run_id, **fields)
        return out


def _freeze_once() -> None:
    """Move what the process has imported so far out of the garbage collector's generations,
    the first time a runner starts in it: modules, classes and the compiled graph live as long
    as the process, and each full collection scanned them all again (a resumed run's loading
    of a 10,000-step plan took twice as long for it)."""
    global _FROZEN
    if not _FROZEN:
        _FROZEN = True
        gc.freeze()


_FROZEN = False


def planner_name(planner: Any) -> str:
    """The planner's class name (a planner built on first use says which it will be)."""
    return str(getattr(planner, "planner_name", None) or type(planner).__name__)


def _superstep_budget_for(steps: int) -> int:
    """LangGraph stops a graph after ``recursion_limit`` supersteps in one call (10,007 by
    default): a window of steps takes two (dispatch, its branches), each question to a person
    and each retry two or three more; a step per window is the worst case."""
    return RECURSION_FLOOR + SUPERSTEPS_PER_STEP * steps


def _first(run_id: str, request: str, sequential: bool = False) -> dict[str, Any]:
    """A new run's state."""
    return {"run_id": run_id, "request": request, "deviations": [], "sequential": sequential}


def run_status(status: str) -> str:
    """The task-runs table's vocabulary for where the graph stopped."""
    return {
        "clarification": "refused",
        "rejected": "cancelled",
        "aborted": "cancelled",
        "interrupted": "running",
    }.get(
        status,
        status
        if status
        in {
            "done",
            "refused",
            "failed",
            "waiting_approval",
            "waiting_person",
            "running",
            "cancelled",
            "planning",
        }
        else "failed",
    )
