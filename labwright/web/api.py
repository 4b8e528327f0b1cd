"""The HTTP API for runs: JSON in and out, a token on every request, errors with a code.

Every route needs a person (bearer token or the page's cookie): reading needs ``read``
(viewers too), starting and rejecting ``operate``, approving ``approve``, the e-stop only that
the person is known. A refusal is ``{"ok": false, "error": {"code", "detail"}}`` with 400,
401, 403, 404 or 409.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from labwright.operations import OperationError, Operations
from labwright.web.auth import person_of
from labwright.web.hub import Hub
from labwright.web.model import page_model
from state_store.people import NotAuthenticated, NotPermitted, PeopleError, Person

Handler = Callable[[Request], Awaitable[Response]]
HEARTBEAT_S = 10.0
MAX_BODY = 64 * 1024


def error(code: str, detail: str, status: int) -> JSONResponse:
    return JSONResponse({"ok": False, "error": {"code": code, "detail": detail}}, status)


def refused(exc: Exception) -> JSONResponse:
    if isinstance(exc, OperationError):
        return error(exc.code, exc.detail, exc.status)
    if isinstance(exc, NotAuthenticated):
        return error(exc.code, str(exc), 401)
    if isinstance(exc, NotPermitted):
        return error(exc.code, str(exc), 403)
    assert isinstance(exc, PeopleError)
    return error(exc.code, str(exc), 400)


async def body_of(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise OperationError("INVALID_ARGUMENT", f"the body is over {MAX_BODY} bytes")
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise OperationError("INVALID_ARGUMENT", "the body is not JSON") from exc
    if not isinstance(data, dict):
        raise OperationError("INVALID_ARGUMENT", "the body must be a JSON object")
    return data


def text(body: dict[str, Any], key: str, required: bool = True) -> str:
    value = body.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise OperationError("INVALID_ARGUMENT", f"{key!r} must be a non-empty string")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise OperationError("INVALID_ARGUMENT", f"{key!r} holds an unpaired surrogate")
    return value


class Api:
    """The API's handlers over one lab's operations."""

    def __init__(self, ops: Operations, hub: Hub, geometry: dict[str, Any]) -> None:
        self.ops = ops
        self.hub = hub
        self.geometry = geometry

    def routes(self) -> list[Route]:
        r = self._route
        return [
            r("/api/me", "GET", "read", self.me),
            r("/api/runs", "GET", "read", self.list_runs),
            r("/api/runs", "POST", "operate", self.create),
            r("/api/runs/{run_id}", "GET", "read", self.run),
            r("/api/runs/{run_id}/plan", "GET", "read", self.plan),
            r("/api/runs/{run_id}/simulation", "GET", "read", self.simulation),
            r("/api/runs/{run_id}/status", "GET", "read", self.status),
            r("/api/runs/{run_id}/events", "GET", "read", self.events),
            r("/api/runs/{run_id}/view", "GET", "read", self.view),
            r("/api/runs/{run_id}/audit", "GET", "read", self.audit),
            r("/api/runs/{run_id}/stream", "GET", "read", self.stream),
            r("/api/runs/{run_id}/approve", "POST", "approve", self.approve),
            r("/api/runs/{run_id}/reject", "POST", "operate", self.reject),
            r("/api/runs/{run_id}/edit", "POST", "operate", self.edit),
            r("/api/runs/{run_id}/answer", "POST", "operate", self.answer),
            r("/api/runs/{run_id}/approve-action", "POST", "approve", self.approve_action),
            r("/api/actions", "GET", "read", self.actions),
            r("/api/actions/approve", "POST", "approve", self.grant_action),
            r("/api/estop", "POST", "estop", self.estop),
            r("/api/audit/verify", "GET", "read", self.verify),
        ]

    def _route(
        self,
        path: str,
        method: str,
        permission: str,
        handler: Callable[[Request, Person], Awaitable[Any]],
    ) -> Route:
        async def endpoint(request: Request) -> Response:
            try:
                person = person_of(request, self.ops.people).require(permission)  # type: ignore[arg-type]
                result = await handler(request, person)
            except (OperationError, PeopleError) as exc:
                return refused(exc)
            if isinstance(result, Response):
                return result
            return JSONResponse(result, 202 if method == "POST" and "accepted" in result else 200)

        return Route(path, endpoint, methods=[method], name=f"{method} {path}")

    # ------------------------------------------------------------------ reads
    async def me(self, request: Request, person: Person) -> dict[str, Any]:
        return {"name": person.name, "role": person.role, "via": person.via}

    async def list_runs(self, request: Request, person: Person) -> dict[str, Any]:
        status = request.query_params.get("status")
        try:
            limit = int(request.query_params.get("limit", "50"))
        except ValueError as exc:
            raise OperationError("INVALID_ARGUMENT", "limit must be a whole number") from exc
        return {"runs": self.ops.list_runs(limit, status)}

    async def run(self, request: Request, person: Person) -> dict[str, Any]:
        return await self.ops.run(request.path_params["run_id"])

    async def plan(self, request: Request, person: Person) -> dict[str, Any]:
        run = await self.ops.run(request.path_params["run_id"])
        return {"plan": run["plan"], "previous_plan": run["previous_plan"]}

    async def simulation(self, request: Request, person: Person) -> dict[str, Any]:
        run = await self.ops.run(request.path_params["run_id"])
        return {"simulation": run["simulation"]}

    async def status(self, request: Request, person: Person) -> dict[str, Any]:
        return await self.ops.status(request.path_params["run_id"])

    async def events(self, request: Request, person: Person) -> dict[str, Any]:
        try:
            since = int(request.query_params.get("since", "0"))
        except ValueError as exc:
            raise OperationError("INVALID_ARGUMENT", "since must be a whole number") from exc
        return {"events": self.ops.events(request.path_params["run_id"], since)}

    async def view(self, request: Request, person: Person) -> dict[str, Any]:
        return await page_model(self.ops, request.path_params["run_id"], self.geometry)

    async def audit(self, request: Request, person: Person) -> dict[str, Any]:
        run_id = request.path_params["run_id"]
        return {"entries": self.ops.events(run_id), "chain": self.ops.verify_audit(run_id)}

    async def verify(self, request: Request, person: Person) -> dict[str, Any]:
        return self.ops.verify_audit(None)

    async def actions(self, request: Request, person: Person) -> dict[str, Any]:
        return {"pending": self.ops.pending_actions()}

    async def stream(self, request: Request, person: Person) -> Response:
        run_id = request.path_params["run_id"]
        await self.ops.status(run_id)  # 404 before the stream starts
        return StreamingResponse(
            self._events(request, run_id),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def _events(self, request: Request, run_id: str) -> AsyncIterator[str]:
        """``status`` whenever it changes, ``audit`` entries as they are written, ``progress``
        of the run being driven; a comment line every few seconds keeps proxies open."""
        last: dict[str, Any] | None = None
        seq = 0
        with self.hub.subscribe() as queue:
            while not await request.is_disconnected():
                status = await self.ops.status(run_id)
                if status != last:
                    last = status
                    yield _sse("status", status)
                for entry in self.ops.events(run_id, seq):
                    seq = entry["seq"]
                    yield _sse(
                        "audit", {k: entry[k] for k in ("seq", "agent", "tool", "outcome", "note")}
                    )
                try:
                    event = await asyncio.wait_for(queue.get(), HEARTBEAT_S)
                except TimeoutError:
                    yield ": ping\n\n"
                    continue
                if event.get("run_id") in (run_id, None) or event.get("what") == "estop":
                    yield _sse("progress", event)

    # ------------------------------------------------------------------ writes
    async def create(self, request: Request, person: Person) -> Any:
        body = await body_of(request)
        run_id = body.get("run_id")
        if run_id is not None and (not isinstance(run_id, str) or not run_id.strip()):
            raise OperationError("INVALID_ARGUMENT", "run_id must be a non-empty string")
        return await self.ops.create(person, text(body, "request"), run_id)

    async def approve(self, request: Request, person: Person) -> Any:
        body = await body_of(request)
        basis = body.get("basis")
        if basis is not None and not isinstance(basis, dict):
            raise OperationError("INVALID_ARGUMENT", "basis must be the question's basis object")
        return await self.ops.approve(person, request.path_params["run_id"], basis)

    async def reject(self, request: Request, person: Person) -> Any:
        body = await body_of(request)
        return await self.ops.reject(person, request.path_params["run_id"], text(body, "reason"))

    async def edit(self, request: Request, person: Person) -> Any:
        body = await body_of(request)
        return await self.ops.edit(person, request.path_params["run_id"], text(body, "request"))

    async def answer(self, request: Request, person: Person) -> Any:
        body = await body_of(request)
        return await self.ops.answer(person, request.path_params["run_id"], text(body, "decision"))

    async def approve_action(self, request: Request, person: Person) -> Any:
        return await self.ops.approve_action(person, request.path_params["run_id"])

    async def grant_action(self, request: Request, person: Person) -> Any:
        body = await body_of(request)
        shown = text(body, "args_hash", required=False) or None  # the hash the page showed
        granted = self.ops.grant_action(
            person, text(body, "instrument"), text(body, "action_id"), shown
        )
        return {"granted": granted}

    async def estop(self, request: Request, person: Person) -> Any:
        try:
            body = await body_of(request)
        except OperationError:
            body = {}  # a malformed body never keeps the instruments going
        reason = body.get("reason") if isinstance(body.get("reason"), str) else ""
        return await self.ops.estop(person, reason or "")


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"
