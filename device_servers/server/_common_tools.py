"""The tools every instrument server has: their argument models, descriptions and handlers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp.types as types
from pydantic import BaseModel, ConfigDict, Field

from device_servers import strict
from device_servers.contract import Event, RunInfo
from device_servers.runtime import InstrumentRuntime

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArgs(_Args):
    pass


class StartRunArgs(_Args):
    protocol: dict[str, Any] = Field(
        description="{name, steps: [{command, args}]} with this instrument's commands."
    )
    dry_run: bool = Field(default=True, description="true: simulate only; false: execute.")
    run_key: str | None = Field(
        default=None,
        max_length=200,
        description="Idempotency key: the same key returns the same run.",
    )


class RunEventsArgs(_Args):
    run_id: str
    since_seq: int = Field(default=0, ge=0, le=2**53)
    max: int = Field(default=100, ge=1, le=1000)


class RunIdArgs(_Args):
    run_id: str


class EstopArgs(_Args):
    reason: str | None = Field(
        default=None, max_length=500, description="Why (kept in the event log and the audit)."
    )


def estop_arguments(arguments: Any) -> dict[str, Any]:
    """What the e-stop takes from its arguments, leniently: it is never refused. A reason
    that is not text is kept as its repr; anything else is named in a warning."""
    given = arguments if isinstance(arguments, dict) else {}
    reason = given.get("reason")
    if reason is not None and not isinstance(reason, str):
        reason = repr(reason)
    ignored = sorted(str(k) for k in given if k != "reason")
    return {"reason": strict.clean_text(reason)[:500] if reason else None, "ignored": ignored}


class ResetEstopArgs(_Args):
    action_id: str = Field(min_length=1, max_length=200)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: what a model reads about it, its arguments (None: none) and its handler."""

    name: str
    description: str
    model: type[BaseModel] | None
    handler: Handler
    annotations: types.ToolAnnotations


def _run_info(info: dict[str, Any]) -> dict[str, Any]:
    return RunInfo.model_validate(info).model_dump(mode="json")


_READ_ONLY = types.ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True)


def common_tools(rt: InstrumentRuntime) -> list[ToolSpec]:
    """The tools of every instrument server (:data:`COMMON_TOOLS`), bound to its runtime."""

    async def get_state(_: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "simulated": rt.simulated, "state": rt.state()}

    async def read_back(_: dict[str, Any]) -> dict[str, Any]:
        return await rt.read_back()

    async def start_run(a: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, **(await rt.start_run(a["protocol"], a["dry_run"], a["run_key"]))}

    async def run_events(a: dict[str, Any]) -> dict[str, Any]:
        page = rt.run_events(a["run_id"], a["since_seq"], a["max"])
        page["events"] = [Event.model_validate(e).model_dump(mode="json") for e in page["events"]]
        return {"ok": True, **page}

    async def get_run(a: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, **_run_info(rt.get_run(a["run_id"]))}

    async def cancel_run(a: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, **_run_info(await rt.cancel_run(a["run_id"]))}

    async def confirm_state(a: dict[str, Any]) -> dict[str, Any]:
        return await rt.confirm_state(a)

    async def emergency_stop(a: dict[str, Any]) -> dict[str, Any]:
        return await rt.emergency_stop(**estop_arguments(a))

    async def reset_estop(a: dict[str, Any]) -> dict[str, Any]:
        return await rt.reset_estop(a)

    return [
        ToolSpec(
            "get_state",
            "The instrument's twin snapshot: labware, wells (volume_ul, contents), tip "
            "racks (tips_present), channels (tip, volume), plus stale, estop, busy run and "
            "in-doubt actions. Structured, read-only.",
            None,
            get_state,
            _READ_ONLY,
        ),
        ToolSpec(
            "read_back",
            "Re-read the instrument and adopt what it reports: clears STATE_STALE (after a "
            "restart, timeout or disconnect) unless the e-stop is latched, lists every "
            "deviation between belief and instrument, and annotates in-doubt actions. "
            "Moves nothing.",
            None,
            read_back,
            types.ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True),
        ),
        ToolSpec(
            "start_run",
            "Start a protocol (a list of this instrument's commands) in the background "
            "and return {run_id, status, simulated} at once; poll run_events. dry_run="
            "true (default) simulates on the twin; dry_run=false first simulates the whole "
            "protocol and refuses to start if any step fails (the step's error code). The "
            "same run_key returns the same run_id, never a second run.",
            StartRunArgs,
            start_run,
            types.ToolAnnotations(destructiveHint=True, idempotentHint=True),
        ),
        ToolSpec(
            "run_events",
            "Events of a run after since_seq (at most max): {events, next_seq, status}. "
            "The log is append-only and durable: a reconnecting client rebuilds "
            "everything with since_seq=0. RUN_NOT_FOUND for an unknown run.",
            RunEventsArgs,
            run_events,
            _READ_ONLY,
        ),
        ToolSpec(
            "get_run",
            "A run's status, steps done and error (RUN_NOT_FOUND if unknown).",
            RunIdArgs,
            get_run,
            _READ_ONLY,
        ),
        ToolSpec(
            "cancel_run",
            "Cancel a run: stops before its next step and aborts the backend's current "
            "operation. Idempotent: a finished run is returned as it is.",
            RunIdArgs,
            cancel_run,
            types.ToolAnnotations(destructiveHint=False, idempotentHint=True),
        ),
        ToolSpec(
            "emergency_stop",
            "Stop the instrument now: aborts the current operation, cancels runs and "
            "latches ESTOP_ACTIVE so nothing moves until a person resets it. Never gated, "
            "never needs approval, never refused: an optional `reason` is recorded, any "
            "other argument is ignored with a warning.",
            EstopArgs,
            emergency_stop,
            types.ToolAnnotations(destructiveHint=False, idempotentHint=True),
        ),
        ToolSpec(
            "confirm_state",
            "A person confirms that the twin (see get_state / read_back) matches the real "
            "instrument, clearing STATE_STALE when the instrument cannot report everything "
            "itself. Requires a person's approval of this action_id (APPROVAL_REQUIRED until "
            "`labwright approve-action`); ESTOP_ACTIVE while the e-stop is latched.",
            ResetEstopArgs,
            confirm_state,
            types.ToolAnnotations(destructiveHint=False),
        ),
        ToolSpec(
            "reset_estop",
            "Clear a latched emergency stop. Requires a person's approval of this "
            "action_id (APPROVAL_REQUIRED until `labwright approve-action` is run); "
            "afterwards the twin is STATE_STALE until read_back.",
            ResetEstopArgs,
            reset_estop,
            types.ToolAnnotations(destructiveHint=True),
        ),
    ]
