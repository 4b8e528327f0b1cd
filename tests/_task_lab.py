"""A four-instrument simulated lab for the task graph, served over in-memory MCP sessions.

lh1 (conftest.LAB: tips_1, reservoir with dye in A1, plate_1 with buffer in B1), reader1, hs1
and arm1 (plate_1 only), each a real device server on a real runtime, reached through a
:class:`DeviceAgent`. The graph is driven like the runner drives it; every wait is bounded.
Outcomes are judged from the simulated world and the instruments' action ledgers.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
from conftest import write_lab
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from agents.device.agent import DeviceAgent
from agents.task.checkpointer import CompactSqliteSaver
from agents.task.graph import DURABILITY, compile_graph
from agents.task.planning.models import (
    Clarification,
    LabView,
    Plan,
    PlanStep,
    Refusal,
)
from agents.task.records import RunRecords
from agents.task.state import TaskContext
from agents.task.timeline import WINDOW
from device_servers.factory import open_runtime
from device_servers.lab import LabConfig, load
from device_servers.server import build_server
from device_servers.sim.world import SimWorld
from policies import build_engine
from state_store import connect, local_operator
from state_store.signoff import ApprovalSigner

WAIT_S = 30.0
ARM_LOCATIONS = [
    "lh1:plate_carrier:1",
    "lh1:plate_carrier:2",
    "lh1:plate_carrier:3",
    "reader1:drawer",
    "hs1:holder",
    "hotel:1",
    "hotel:2",
]
EXTRA: list[dict[str, Any]] = [
    {
        "id": "reader1",
        "kind": "plate_reader",
        "absorbance_per_fraction": {"dye": 2.0},
        "noise_sd": 0.002,
        "seed": 7,
    },
    {"id": "hs1", "kind": "heater_shaker", "time_scale": 600},
    {
        "id": "arm1",
        "kind": "plate_mover",
        "locations": ARM_LOCATIONS,
        "plates": ["plate_1"],
        "time_scale": 200,
    },
]
HOME = "lh1:plate_carrier:1"
DRAWER = "reader1:drawer"
DYE_UL = 10000.0

Result = Plan | Clarification | Refusal
SessionWrap = Callable[[str, ClientSession], ClientSession]


def task_lab_file(tmp: Path) -> Path:
    return write_lab(tmp, lambda data: data["instruments"].extend(EXTRA))


# --------------------------------------------------------------------------- plans
def step(sid: str, instrument: str, command: str, expect: Any = None, **args: Any) -> PlanStep:
    return PlanStep(id=sid, instrument=instrument, command=command, args=args, expect=expect or {})


def transfer(sid: str, wells: list[str], volume: float = 50.0, **extra: Any) -> PlanStep:
    """Dye from reservoir A1 into plate_1 wells, one tip."""
    expect = {"wells": {f"plate_1:{w}": volume for w in wells}}
    expect["wells"]["reservoir:A1"] = DYE_UL - volume * len(wells)
    return step(
        sid,
        "lh1",
        "transfer",
        expect,
        source="reservoir",
        source_well="A1",
        destination="plate_1",
        destination_wells=wells,
        volume_ul=volume,
        new_tip="once",
        **extra,
    )


def read_steps(first: int = 2) -> list[PlanStep]:
    """Open the drawer, move plate_1 in, close, read absorbance at 600 nm."""
    n = first
    return [
        step(f"s{n}", "reader1", "open_drawer", {"drawer": "open"}),
        step(
            f"s{n + 1}",
            "arm1",
            "move_plate",
            {"plate_location": {"plate_1": DRAWER}},
            plate="plate_1",
            to_location=DRAWER,
        ),
        step(
            f"s{n + 2}",
            "reader1",
            "close_drawer",
            {"drawer": "closed", "plate_in_reader": "plate_1"},
            expect_plate="plate_1",
        ),
        step(
            f"s{n + 3}",
            "reader1",
            "read_absorbance",
            {"reading": {"plate": "plate_1", "mode": "absorbance", "wells": 96}},
            plate="plate_1",
            wavelength_nm=600,
        ),
    ]


def make_plan(*steps: PlanStep, request: str = "fixed request") -> Plan:
    return Plan(request=request, summary=f"{len(steps)} fixed steps", steps=list(steps))


def transfer_and_read() -> Plan:
    return make_plan(transfer("s1", ["A1", "A2", "A3"]), *read_steps(2))


class FakePlanner:
    """Answers every request with the next scripted result (the last one repeats)."""

    def __init__(self, *results: Result) -> None:
        self.results = list(results)
        self.requests: list[str] = []
        self.labs: list[LabView] = []

    def plan(self, request: str, lab: LabView) -> Result:
        self.requests.append(request)
        self.labs.append(lab)
        return self.results.pop(0) if len(self.results) > 1 else self.results[0]


class ReplanningPlanner(FakePlanner):
    """A fake planner that can also be sent a plan back with simulation errors."""

    def __init__(self, first: Result, *replans: Result) -> None:
        super().__init__(first)
        self.replans = list(replans)
        self.errors: list[list[str]] = []

    def replan(self, request: str, lab: LabView, previous: Plan, errors: list[str]) -> Result:
        self.errors.append(list(errors))
        return self.replans.pop(0)


# --------------------------------------------------------------------------- the lab
@dataclass
class TaskLab:
    """Served instruments, their device agents, the world, and a graph to drive."""

    config: LabConfig
    agents: dict[str, DeviceAgent]
    world: SimWorld
    graph: Any = field(default_factory=lambda: compile_graph(InMemorySaver()))
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    records: RunRecords = field(init=False)
    signer: ApprovalSigner | None = None

    def __post_init__(self) -> None:
        # In the lab database, as the runner keeps them: every context of this lab shares them.
        self.records = RunRecords(connect(self.config.db_path))
        if self.signer is None:
            self.signer = ApprovalSigner(self.records.conn)

    def context(
        self, planner: Any, progress: Callable[..., None] | None = None, window: int = WINDOW
    ) -> TaskContext:
        def tell(what: str, data: dict[str, Any]) -> None:
            self.events.append((what, data))
            if progress is not None:
                progress(what, data)

        return TaskContext(
            agents=self.agents,
            planner=planner,
            progress=tell,
            records=self.records,
            signer=self.signer,
            window=window,
        )

    # ---------------------------------------------------------------- the run's records
    def observations(self, snap: Any, step: str | None = None) -> list[dict[str, Any]]:
        """Every observation the run of this snapshot recorded (of one step), oldest first."""
        seen = self.records.observations(snap.values["run_id"])
        return [o for o in seen if step is None or o["step_id"] == step]

    def codes(self, snap: Any, step: str | None = None) -> list[str | None]:
        """Error codes of every observation so far, of one step or all (None: it went
        through)."""
        return [
            None if o.get("error") is None else o["error"].get("code")
            for o in self.observations(snap, step)
        ]

    def plan(self, snap: Any) -> Plan:
        return self.records.plan(snap.values["plan_ref"])

    def simulation(self, snap: Any) -> dict[str, Any]:
        return dict(self.records.get(snap.values["simulation_ref"]))

    # ---------------------------------------------------------------- driving
    async def drive(self, ctx: TaskContext, graph_input: Any, thread: str = "run-1") -> Any:
        """Run the graph until it ends or waits for a person; the checkpointed snapshot."""
        config = {"configurable": {"thread_id": thread}}
        with anyio.fail_after(WAIT_S):
            async for _ in self.graph.astream(
                graph_input, config, context=ctx, durability=DURABILITY
            ):
                pass
            return await self.graph.aget_state(config)

    async def start(self, ctx: TaskContext, request: str = "fixed request", thread: str = "run-1"):
        first = {"run_id": thread, "request": request, "deviations": []}
        return await self.drive(ctx, first, thread)

    async def answer(self, ctx: TaskContext, answer: dict[str, Any], thread: str = "run-1"):
        """Resume with a person's answer; a plan's approval is signed as the local operator
        over the basis the question showed (as the runner does)."""
        config = {"configurable": {"thread_id": thread}}
        shown = question(await self.graph.aget_state(config)) or {}
        basis = shown.get("basis")
        if shown.get("kind") == "approval" and answer.get("decision") == "approve" and basis:
            assert self.signer is not None
            me = local_operator()
            record = self.signer.sign(
                run_id=thread, person=me.name, role=me.role, via=me.via, basis=basis
            )
            answer = {**answer, "record": record}
        return await self.drive(ctx, Command(resume=answer), thread)

    async def approved(self, ctx: TaskContext, thread: str = "run-1") -> Any:
        """Start a run, check it waits for approval, approve it; the final snapshot."""
        snap = await self.start(ctx, thread=thread)
        assert waiting_for(snap) == "approval"
        return await self.answer(ctx, {"decision": "approve"}, thread)

    # ---------------------------------------------------------------- ground truth
    def ops(self, instrument: str | None = None, op: str | None = None) -> list[dict[str, Any]]:
        return [o for o in self.world.physical_ops(instrument) if op is None or o["op"] == op]

    def volume(self, labware: str, well: str) -> float:
        return round(float(self.world.well(labware, well)["volume_ul"]), 3)

    def actions(self, instrument: str | None = None) -> list[dict[str, Any]]:
        """The instruments' action ledgers (what each server executed, by action id)."""
        conn = sqlite3.connect(self.config.db_path)
        conn.row_factory = sqlite3.Row
        try:
            sql = "SELECT instrument, action_id, command, status FROM actions"
            rows = conn.execute(sql + " ORDER BY rowid").fetchall()
        finally:
            conn.close()
        return [dict(r) for r in rows if instrument is None or r["instrument"] == instrument]


def waiting_for(snap: Any) -> str | None:
    """The kind of question the run waits on (approval / escalation), or None."""
    payload = question(snap)
    return None if payload is None else str(payload.get("kind"))


def question(snap: Any) -> dict[str, Any] | None:
    for task in snap.tasks:
        for intr in task.interrupts:
            return dict(intr.value)
    return None


@contextlib.asynccontextmanager
async def served_lab(
    config: LabConfig, wrap: SessionWrap | None = None
) -> AsyncIterator[dict[str, DeviceAgent]]:
    """Every instrument on a started runtime and an in-memory MCP session; a device agent each."""
    async with contextlib.AsyncExitStack() as stack:
        agents: dict[str, DeviceAgent] = {}
        for inst in config.instruments:
            runtime = await stack.enter_async_context(
                open_runtime(inst, config.db_path, config.world_path)
            )
            session: ClientSession = await stack.enter_async_context(
                create_connected_server_and_client_session(build_server(runtime))
            )
            if wrap is not None:
                session = wrap(inst.id, session)
            kind = str(getattr(inst, "kind", "?"))
            # The instrument's own rules, as the runner gives them (its recovery: section too).
            policy = build_engine(
                kind, inst.policy.rules_file, inst.policy.rules, inst.policy.protected_labware
            )
            agents[inst.id] = DeviceAgent(inst.id, kind, session, policy, call_timeout_s=WAIT_S)
        yield agents


@contextlib.asynccontextmanager
async def task_lab(
    tmp: Path, wrap: SessionWrap | None = None, lab_file: Callable[[Path], Path] = task_lab_file
) -> AsyncIterator[TaskLab]:
    config = load(lab_file(tmp))
    async with served_lab(config, wrap) as agents:
        world = SimWorld(config.world_path)
        try:
            yield TaskLab(config, agents, world)
        finally:
            world.close()


@contextlib.asynccontextmanager
async def process(
    config: LabConfig, checkpoints: Path, wrap: SessionWrap | None = None
) -> AsyncIterator[TaskLab]:
    """One task-agent process: started runtimes, sessions, agents, a graph on the checkpoints
    (the runner's own saver: a write is one transaction, never left open by a cancelled branch)."""
    world = SimWorld(config.world_path)
    try:
        async with (
            served_lab(config, wrap) as agents,
            CompactSqliteSaver.from_conn_string(str(checkpoints)) as saver,
        ):
            yield TaskLab(config, agents, world, compile_graph(saver))
    finally:
        world.close()


class Crash(Exception):
    """The task process dying at a chosen point (not a transport error: nothing retries it)."""


class FlakySession:
    """An MCP session whose executing calls of one tool fail ``times`` times.

    ``after``: the call reaches the server (the instrument acts) and only the answer is lost;
    otherwise it fails before anything is sent. Everything else goes to the real session.
    """

    def __init__(
        self,
        inner: ClientSession,
        tool: str,
        *,
        times: int = 1,
        after: bool = True,
        error: Callable[[], BaseException] = anyio.ClosedResourceError,
    ) -> None:
        self.inner = inner
        self.tool = tool
        self.times = times
        self.after = after
        self.error = error
        self.failed = 0

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        executing = name == self.tool and (arguments or {}).get("dry_run") is False
        if not executing or self.failed >= self.times:
            return await self.inner.call_tool(name, arguments)
        self.failed += 1
        if self.after:
            await self.inner.call_tool(name, arguments)
        raise self.error()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def flaky(instrument: str, tool: str, **kwargs: Any) -> SessionWrap:
    """A session wrap that makes one instrument's ``tool`` fail (see :class:`FlakySession`)."""

    def wrap(inst: str, session: ClientSession) -> ClientSession:
        if inst != instrument:
            return session
        return cast(ClientSession, FlakySession(session, tool, **kwargs))

    return wrap
