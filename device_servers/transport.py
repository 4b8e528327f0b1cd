"""Serve one instrument over stdio (default) or streamable HTTP.

stdio: the MCP stream owns the process's real stdout; file descriptor 1 is pointed at stderr
first, so a stray ``print`` (PyLabRobot's chatterbox backends print) cannot corrupt it.
HTTP: binds 127.0.0.1 unless told otherwise; a bearer token when configured (missing or wrong
-> 401); the ``Origin`` header always validated (foreign origin -> 403).
"""

from __future__ import annotations

import contextlib
import hmac
import io
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio

from device_servers.contract import InstrumentBase
from device_servers.factory import open_runtime
from device_servers.server import build_server


def _claim_stdout() -> Any:
    """Return a text stream on the real stdout and send fd 1 (and sys.stdout) to stderr."""
    sys.stdout.flush()
    real = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return io.TextIOWrapper(io.FileIO(real, "w"), encoding="utf-8", write_through=True)


async def serve_stdio(config: InstrumentBase, db_path: Path, world_path: Path) -> None:
    from mcp.server.stdio import stdio_server

    out = anyio.wrap_file(_claim_stdout())
    async with open_runtime(config, db_path, world_path) as runtime:
        server = build_server(runtime)
        async with stdio_server(stdout=out) as (read, write):
            await server.run(read, write, server.create_initialization_options())


class GuardMiddleware:
    """ASGI: Origin validation (403) and optional bearer-token auth (401)."""

    def __init__(self, app: Any, token: str | None, allowed_origins: set[str]) -> None:
        self.app = app
        self.token = token
        self.allowed = allowed_origins

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])
        }
        origin = headers.get("origin")
        if origin is not None and origin not in self.allowed:
            await self._deny(send, 403, "forbidden origin")
            return
        if self.token is not None:
            auth = headers.get("authorization", "")
            scheme, _, given = auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip(), self.token):
                await self._deny(
                    send,
                    401,
                    "missing or invalid bearer token",
                    [(b"www-authenticate", b'Bearer realm="labwright"')],
                )
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _deny(
        send: Any, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        body = json.dumps({"error": message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    *(extra or []),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def build_http_app(
    config: InstrumentBase,
    db_path: Path,
    world_path: Path,
    *,
    host: str,
    port: int,
    token: str | None,
    allowed_origins: list[str] | None = None,
) -> Any:
    """A Starlette app serving MCP at /mcp, wrapped in the guard."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    holder: dict[str, Any] = {}

    class _Endpoint:  # an ASGI app (not a function), so Starlette passes the raw scope
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await holder["manager"].handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with open_runtime(config, db_path, world_path) as runtime:
            manager = StreamableHTTPSessionManager(app=build_server(runtime))
            holder["manager"] = manager
            async with manager.run():
                yield

    app = Starlette(
        routes=[Route("/mcp", endpoint=_Endpoint(), methods=["GET", "POST", "DELETE"])],
        lifespan=lifespan,
    )
    origins = {f"http://{h}:{port}" for h in ("127.0.0.1", "localhost", host)}
    origins.update(allowed_origins or [])
    return GuardMiddleware(app, token, origins)


def serve_http(
    config: InstrumentBase,
    db_path: Path,
    world_path: Path,
    *,
    host: str,
    port: int,
    token: str | None,
    allowed_origins: list[str] | None = None,
) -> None:
    import uvicorn

    app = build_http_app(
        config,
        db_path,
        world_path,
        host=host,
        port=port,
        token=token,
        allowed_origins=allowed_origins,
    )
    uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
