"""What a scenario does to a run through the API, besides answering: faults armed when their
step is first dispatched, e-stops pressed during a step (or during its recovery), and what a
person does at the deck before answering a question (reset an e-stop, restart a server).
"""

from __future__ import annotations

import asyncio
from typing import Any

from device_servers.sim.world import SimWorld
from evals.judge import _Run
from evals.scenario import EStop, Scenario
from state_store import Approvals, Person

# The scripted person of a scenario: approves what the scenario's answers say to approve.
EVAL_PERSON = Person("eval", "approver", via="terminal")


class Disturbances:
    """The scenario's disturbances of one API run: faults armed when their step is first
    dispatched, e-stops pressed during the n-th dispatch of a step, and what a person does
    before answering a question (reset an e-stop, restart a killed server)."""

    def __init__(self, sc: Scenario, world: SimWorld, run: _Run) -> None:
        self.sc = sc
        self.world = world
        self.run = run
        self.step_faults = sc.step_faults()
        self.dispatches: dict[str, int] = {}
        self.pressed: list[tuple[EStop, asyncio.Task[Any]]] = []
        self.resets = 0
        self.restarted: set[int] = set()
        self.runner: Any = None

    def on_dispatch(self, step: str) -> None:
        n = self.dispatches[step] = self.dispatches.get(step, 0) + 1
        if n == 1:
            for inst, spec in self.step_faults.get(step, []):
                self.world.add_fault(inst, self._from_here(inst, spec))
        for es in self.sc.all_estops:
            if es.during_step == step and es.dispatch == n:
                task = asyncio.ensure_future(self._press(es))
                self.pressed.append((es, task))

    def _from_here(self, inst: str, spec: dict[str, Any]) -> dict[str, Any]:
        """``at_op`` of a step's fault counts from the step's dispatch."""
        if spec.get("at_op") is None:
            return spec
        row = self.world.conn.execute(
            "SELECT n FROM op_counts WHERE instrument=?", (inst,)
        ).fetchone()
        return {**spec, "at_op": int(spec["at_op"]) + (int(row["n"]) if row else 0)}

    async def _press(self, es: EStop) -> None:
        await asyncio.sleep(es.after_s)
        await self.runner.context.agents[es.instrument].call("emergency_stop")
        self.run.events.append(f"person: e-stop {es.instrument}")

    async def settle(self) -> None:
        for _, task in self.pressed:
            await task

    async def before_answer(self, run_id: str) -> None:
        """What a person does at the deck before answering: reset the e-stops they were
        asked to, restart a server that was killed."""
        for es, task in self.pressed:
            if es.reset and task.done() and not getattr(task, "_reset", False):
                task._reset = True  # type: ignore[attr-defined]
                await self._reset(es.instrument, run_id)
        for i, kill in enumerate(self.sc.server_kills):
            if kill.restart and i not in self.restarted and self._killed(kill.instrument):
                self.restarted.add(i)
                await self.runner.restart_server(kill.instrument)
                self.run.events.append(f"person: restarted the {kill.instrument} server")

    def _killed(self, inst: str) -> bool:
        row = self.world.conn.execute(
            "SELECT sum(fired) FROM faults WHERE instrument=? AND kind='crash'", (inst,)
        ).fetchone()
        return bool(row and row[0])

    async def _reset(self, inst: str, run_id: str) -> None:
        self.resets += 1
        action_id = f"{run_id}/person/reset-estop#{self.resets}"
        agent = self.runner.context.agents[inst]
        await agent.call("reset_estop", action_id=action_id)  # asks for an approval
        Approvals(self.runner.conn).grant(inst, action_id, EVAL_PERSON)
        result = await agent.call("reset_estop", action_id=action_id)
        self.runner.audit.append(
            run_id=run_id,
            agent="person",
            tool="reset_estop",
            args={"instrument": inst, "action_id": action_id},
            decision_note="a person reset the e-stop at the instrument",
            result={"ok": bool(result.get("ok")), "error": result.get("error")},
        )
        self.run.events.append(f"person: reset the e-stop of {inst} ({bool(result.get('ok'))})")
