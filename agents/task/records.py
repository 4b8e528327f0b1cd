"""A task run's records outside its checkpoints: the plan and simulation by hash, observations.

The graph state holds references (``plan_ref``, ``simulation_ref``) and a cursor (``observed``:
how many observations the run has recorded); the values live in the lab database
(:mod:`state_store.blobs`, :mod:`state_store.observations`), so a checkpoint is the same size at
step 10,000 as at step 1. Values found by hash never change, so a process validates a plan once
and keeps it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from state_store.blobs import Blobs
from state_store.observations import ObservationLog

if TYPE_CHECKING:  # the models are imported where they are used: a runner makes its records
    # before it starts its servers (agents.task.runner), and they load pydantic and the MCP
    # types
    from agents.device.agent import Observation
    from agents.task.planning.models import Plan

LANE = "main"  # the lane of a run's steps dispatched one after another


class RunRecords:
    """Plans, simulation reports and observations of the lab's task runs."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.blobs = Blobs(conn)
        self.log = ObservationLog(conn)
        self._plans: dict[str, Plan] = {}
        self._values: dict[str, Any] = {}
        self._parts: dict[tuple[str, tuple[str, ...]], Any] = {}

    @classmethod
    def in_memory(cls) -> RunRecords:
        """Records that live as long as this process (graphs on an in-memory checkpointer)."""
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        return cls(conn)

    # ---------------------------------------------------------------- by hash
    def put_plan(self, plan: Plan) -> str:
        ref = self.blobs.put("plan", plan.model_dump(mode="json"))
        self._plans[ref] = plan
        return ref

    def plan(self, ref: str) -> Plan:
        plan = self._plans.get(ref)
        if plan is None:
            from agents.task.planning.models import Plan

            plan = self._plans[ref] = Plan.model_validate(self.blobs.get(ref))
        return plan

    def put(self, kind: str, value: Any) -> str:
        """Store any other large JSON value (a simulation report); its reference."""
        ref = self.blobs.put(kind, value)
        self._values[ref] = value
        return ref

    def get(self, ref: str | None) -> Any:
        """The value stored under ``ref`` (None for None)."""
        if ref is None:
            return None
        if ref not in self._values:
            self._values[ref] = self.blobs.get(ref)
        return self._values[ref]

    def part(self, ref: str | None, *keys: str) -> Any:
        """``get(ref)[keys[0]][keys[1]]...`` (None for None or a missing key), decoding only
        that part of the stored value (:meth:`state_store.blobs.Blobs.part`)."""
        if ref is None:
            return None
        if ref in self._values:
            value = self._values[ref]
            for key in keys:
                value = value.get(key) if isinstance(value, dict) else None
            return value
        if (ref, keys) not in self._parts:
            self._parts[(ref, keys)] = self.blobs.part(ref, *keys)
        return self._parts[(ref, keys)]

    # ---------------------------------------------------------------- observations
    def record(self, run_id: str, seq: int, obs: Observation, lane: str = LANE) -> None:
        """Record an observation at ``seq`` of ``lane``; the instrument state it carries is
        stored by hash (a state seen before -- the same tips back in the rack -- is stored
        once)."""
        body = obs.model_dump(mode="json")
        state = body.pop("state", None)
        if state:
            body["state_ref"] = self.blobs.put("instrument_state", state)
        self.log.record(run_id, lane, seq, body)

    def observation(self, run_id: str, seq: int, lane: str = LANE) -> Observation:
        """The observation at ``seq`` of ``lane``, with its instrument state."""
        found = self.log.get(run_id, lane, seq)
        if found is None:
            raise LookupError(f"run {run_id} has no observation {seq} in lane {lane}")
        from agents.device.agent import Observation

        body = dict(found.body)
        ref = body.pop("state_ref", None)
        return Observation.model_validate({**body, "state": self.blobs.get(ref) if ref else {}})

    def observations(self, run_id: str) -> Iterator[dict[str, Any]]:
        """Every observation of the run, in the order they were recorded (their instrument
        states by reference, ``state_ref``: see :meth:`observation`)."""
        for row in self.log.all(run_id):
            yield row.body
