"""How agents reach instruments: one MCP connection per instrument, from the lab config.

Local instruments are started as ``python -m labwright serve <id>`` over stdio, unless the
lab's long-lived servers are up (``labwright lab up``: reached over streamable HTTP on
127.0.0.1 with their generated token); remote ones are reached over streamable HTTP (``url``
in the lab file, bearer token from ``token_env``). Device agents hold ONE session each
(``client.session(name)``), opened with the MCP SDK's own stdio and streamable-HTTP clients
(the same transports ``langchain-mcp-adapters`` wraps; its tool adapters are not needed here,
and importing them loads FastMCP and a web server into every task process).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from device_servers.contract import InstrumentBase
from state_store.lab_servers import LabServers, ServerRecord, file_sha256, is_up

HTTP_TIMEOUT_S = 30.0
HTTP_READ_TIMEOUT_S = 300.0


class LabServersStale(RuntimeError):
    """A lab server is up but serves another version of the lab file than the one given."""


class ServerUnavailable(ConnectionError):
    """An instrument's server could not be started or reached, so its session never opened
    (e.g. the instrument is already served by a process that is not the lab's). A
    ConnectionError: a device agent treats it as the transport failure it is."""


def unavailable_in(exc: BaseException) -> ServerUnavailable | None:
    """The :class:`ServerUnavailable` that ``exc`` is or holds (task groups wrap it)."""
    if isinstance(exc, ServerUnavailable):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = unavailable_in(inner)
            if found is not None:
                return found
    return None


def attached(
    instruments: list[InstrumentBase], config_path: Path, state_dir: Path | None
) -> dict[str, ServerRecord]:
    """The lab's long-lived servers (``labwright lab up``) that are up, by instrument.

    Raises:
        LabServersStale: one is up but was started from another version of the lab file
            (it would act on an old configuration, and a second server for that instrument
            must not start beside it).
    """
    if state_dir is None:
        return {}
    wanted = {i.id for i in instruments if not i.url}
    up = {r.instrument: r for r in LabServers(state_dir).all() if r.instrument in wanted}
    up = {name: r for name, r in up.items() if is_up(r)}
    if up:
        sha = file_sha256(config_path)
        stale = sorted(name for name, r in up.items() if r.config_sha256 != sha)
        if stale:
            raise LabServersStale(
                f"{', '.join(stale)} {'is' if len(stale) == 1 else 'are'} served by `labwright "
                f"lab up` from an older version of {config_path}: run `labwright lab down`, "
                "then `labwright lab up`"
            )
    return up


def connections(
    instruments: list[InstrumentBase],
    config_path: Path,
    env: dict[str, str] | None = None,
    state_dir: Path | None = None,
) -> dict[str, Any]:
    """Connections for every instrument of a lab: the lab's long-lived
    server where one is up (in ``state_dir``), a new stdio server process otherwise."""
    child_env = {**os.environ, **(env or {})}
    lab_up = attached(instruments, config_path, state_dir)
    out: dict[str, Any] = {}
    for inst in instruments:
        record = lab_up.get(inst.id)
        if record is not None:
            headers = {"Authorization": f"Bearer {record.token}"}
            out[inst.id] = {"transport": "streamable_http", "url": record.url, "headers": headers}
        elif inst.url:
            headers = {}
            if inst.token_env and os.environ.get(inst.token_env):
                headers["Authorization"] = f"Bearer {os.environ[inst.token_env]}"
            out[inst.id] = {"transport": "streamable_http", "url": inst.url, "headers": headers}
        else:
            out[inst.id] = {
                "transport": "stdio",
                "command": sys.executable,
                "args": ["-m", "labwright", "serve", inst.id, "--config", str(config_path)],
                "env": child_env,
            }
    return out


class LabClient:
    """Named connections to a lab's instruments; ``session(name)`` opens one MCP session."""

    def __init__(self, connections: dict[str, Any]) -> None:
        self.connections = connections

    @contextlib.asynccontextmanager
    async def session(
        self, name: str, on_connected: Callable[[], object] | None = None
    ) -> AsyncIterator[Any]:
        """An initialized ``ClientSession`` to instrument ``name``, open until the block ends
        (``on_connected`` is called once the server process is spawned or the HTTP client
        made, before the session is initialized). A session that cannot open is a
        :class:`ServerUnavailable`; what fails once it is open passes through unchanged."""
        if name not in self.connections:
            raise ValueError(f"no instrument {name!r} (have {sorted(self.connections)})")
        conn = self.connections[name]
        opened = False
        try:
            async with self._open(conn, on_connected) as session:
                opened = True
                yield session
        except Exception as exc:
            if opened:
                raise
            where = conn.get("url") or "its stdio server"
            raise ServerUnavailable(
                f"{name}: the instrument's server ({where}) did not start or answer: "
                f"{_first_line(exc)} (see the message above; `labwright lab status` lists "
                "the lab's servers)"
            ) from exc

    @contextlib.asynccontextmanager
    async def _open(
        self, conn: dict[str, Any], on_connected: Callable[[], object] | None
    ) -> AsyncIterator[Any]:
        from mcp.client.session import ClientSession

        async with contextlib.AsyncExitStack() as stack:
            if conn["transport"] == "stdio":
                from mcp.client.stdio import StdioServerParameters, stdio_client

                params = StdioServerParameters(
                    command=conn["command"], args=conn["args"], env=conn.get("env")
                )
                read, write = await stack.enter_async_context(stdio_client(params))
            else:
                import httpx
                from mcp.client.streamable_http import streamable_http_client

                http = await stack.enter_async_context(
                    httpx.AsyncClient(
                        headers=conn.get("headers") or {},
                        timeout=httpx.Timeout(HTTP_TIMEOUT_S, read=HTTP_READ_TIMEOUT_S),
                        follow_redirects=True,
                    )
                )
                read, write, _ = await stack.enter_async_context(
                    streamable_http_client(conn["url"], http_client=http)
                )
            if on_connected is not None:
                on_connected()
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            yield session


def client_for(
    instruments: list[InstrumentBase],
    config_path: Path,
    env: dict[str, str] | None = None,
    state_dir: Path | None = None,
) -> LabClient:
    return LabClient(connections(instruments, config_path, env, state_dir))


def _first_line(exc: BaseException) -> str:
    """The innermost error's first line (an ExceptionGroup says only how many it holds)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
