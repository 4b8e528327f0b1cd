"""Serve one instrument over stdio (default) or streamable HTTP.

stdio: the MCP stream owns the process's real stdout; file descriptor 1 is pointed at stderr
first, so a stray ``print`` (PyLabRobot's chatterbox backends print) cannot corrupt it.
HTTP: binds 127.0.0.1 unless told otherwise; without a token only loopback, with a warning; a
bearer token when configured (missing or wrong -> 401, compared in constant time); ``Host``
(421) and ``Origin`` (403) always validated by the MCP SDK's transport security; TLS from a
certificate and key file.
"""

from __future__ import annotations

import contextlib
import hmac
import io
import ipaddress
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from device_servers.contract import InstrumentBase
from device_servers.errors import ConfigurationError
from device_servers.factory import open_runtime
from device_servers.server import build_server

if TYPE_CHECKING:  # Starlette comes with it: only HTTP serving needs it
    from mcp.server.transport_security import TransportSecuritySettings


def _claim_stdout() -> Any:
    """Return a text stream on the real stdout and send fd 1 (and sys.stdout) to stderr."""
    sys.stdout.flush()
    real = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return io.TextIOWrapper(io.FileIO(real, "w"), encoding="utf-8", write_through=True)


async def serve_stdio(config: InstrumentBase, db_path: Path, world_path: Path) -> None:
    from device_servers.stdio import stdio_streams

    out = anyio.wrap_file(_claim_stdout())
    async with open_runtime(config, db_path, world_path) as runtime:
        server = build_server(runtime)
        async with stdio_streams(out) as (read, write):
            await server.run(read, write, server.create_initialization_options())


LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})


class TransportRefused(ConfigurationError):
    """A way of serving that is refused before anything listens: a token-less bind beyond
    loopback, an incomplete or missing TLS certificate and key."""


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``; a wildcard or a name is not loopback."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, token: str | None) -> str | None:
    """Refuse a token-less bind beyond loopback; return the warning a token-less loopback gets."""
    if token:
        return None
    if not is_loopback(host):
        raise TransportRefused(
            f"--host {host} without a token would give control of the instrument to anyone "
            "who can reach this machine: pass --token (or set LABWRIGHT_TOKEN), or bind "
            "127.0.0.1"
        )
    return (
        f"warning: serving over HTTP on {host} without a token: every local user and process "
        "can control this instrument; pass --token (or set LABWRIGHT_TOKEN) to require one"
    )


def security_settings(
    host: str, port: int, *, tls: bool, allowed_hosts: list[str], allowed_origins: list[str]
) -> TransportSecuritySettings:
    """The MCP SDK's DNS-rebinding protection: the Host and Origin headers a client may send.

    Loopback names are always allowed, the bind address unless it is a wildcard, then
    ``allowed_hosts`` (names or addresses clients use to reach a server bound to 0.0.0.0).
    """
    scheme = "https" if tls else "http"
    names = ["127.0.0.1", "localhost", "[::1]"]
    if host not in {"0.0.0.0", "::", ""}:
        names.append(f"[{host}]" if ":" in host else host)
    names += allowed_hosts
    default_port = port == (443 if tls else 80)
    hosts: list[str] = []
    for name in dict.fromkeys(names):
        hosts.append(f"{name}:{port}")
        if default_port:
            hosts.append(name)
    origins = [f"{scheme}://{h}" for h in hosts] + list(allowed_origins)
    from mcp.server.transport_security import TransportSecuritySettings

    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class GuardMiddleware:
    """ASGI: optional bearer-token auth (401), compared in constant time on the header's bytes."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.app = app
        self.token = token.encode("utf-8") if token else None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self.token is None:
            await self.app(scope, receive, send)
            return
        auth = next((v for k, v in scope.get("headers", []) if k.lower() == b"authorization"), b"")
        scheme, _, given = bytes(auth).partition(b" ")
        # Bytes, not str: hmac.compare_digest refuses non-ASCII strings (a 500 before).
        if scheme.lower() != b"bearer" or not hmac.compare_digest(given.strip(), self.token):
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
    allowed_hosts: list[str] | None = None,
    tls: bool = False,
) -> Any:
    """Starlette serving MCP at /mcp: Host and Origin checked by the SDK, the token by the guard."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    holder: dict[str, Any] = {}
    settings = security_settings(
        host,
        port,
        tls=tls,
        allowed_hosts=allowed_hosts or [],
        allowed_origins=allowed_origins or [],
    )

    class _Endpoint:  # an ASGI app (not a function), so Starlette passes the raw scope
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await holder["manager"].handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with open_runtime(config, db_path, world_path) as runtime:
            manager = StreamableHTTPSessionManager(
                app=build_server(runtime), security_settings=settings
            )
            holder["manager"] = manager
            async with manager.run():
                yield

    app = Starlette(
        routes=[Route("/mcp", endpoint=_Endpoint(), methods=["GET", "POST", "DELETE"])],
        lifespan=lifespan,
    )
    return GuardMiddleware(app, token)


def serve_http(
    config: InstrumentBase,
    db_path: Path,
    world_path: Path,
    *,
    host: str,
    port: int,
    token: str | None,
    allowed_origins: list[str] | None = None,
    allowed_hosts: list[str] | None = None,
    tls_cert: Path | None = None,
    tls_key: Path | None = None,
) -> None:
    """Serve over streamable HTTP (TLS when given a certificate and key file).

    Raises TransportRefused for a token-less bind beyond loopback, before anything listens.
    """
    import uvicorn

    warning = check_exposure(host, token)
    if (tls_cert is None) != (tls_key is None):
        raise TransportRefused("TLS needs both --tls-cert and --tls-key")
    for label, tls_file in (("certificate", tls_cert), ("key", tls_key)):
        if tls_file is not None and not tls_file.is_file():
            raise TransportRefused(f"TLS {label} file {tls_file} does not exist")
    if warning:
        print(warning, file=sys.stderr, flush=True)
    app = build_http_app(
        config,
        db_path,
        world_path,
        host=host,
        port=port,
        token=token,
        allowed_origins=allowed_origins,
        allowed_hosts=allowed_hosts,
        tls=tls_cert is not None,
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        ssl_certfile=str(tls_cert) if tls_cert else None,
        ssl_keyfile=str(tls_key) if tls_key else None,
    )
