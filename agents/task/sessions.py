"""A task process's MCP sessions, one per instrument, each opened the first time it is asked.

Every session lives in a task of its own (its context entered and left there) until the
runner closes or that instrument's server is restarted. A session opens on first use: a
resumed run starts only the servers of the instruments it still uses (after 10,000 steps on
the liquid handler, a last move of the arm starts the arm's server alone, and the server of
the instrument holding the plate when the move asks it). Every server started is a process
importing its drivers, on the same CPUs.

:meth:`Sessions.warm` starts some sessions before anyone asks (a resumed run's instruments),
side by side and without waiting for them: their servers start while the task process goes
on loading the graph and the run. A session warmed and never used costs a server process and
nothing else; a session asked for and not warmed opens as before.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.types import CallToolResult, ListToolsResult

    from agents.mcp_client import LabClient


class OnFirstUse:
    """A device agent's MCP session that is opened the first time the agent calls."""

    def __init__(self, opener: Callable[[], Awaitable[Any]]) -> None:
        self._opener = opener

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> CallToolResult:
        result: CallToolResult = await (await self._opener()).call_tool(name, arguments)
        return result

    async def list_tools(self) -> ListToolsResult:
        result: ListToolsResult = await (await self._opener()).list_tools()
        return result


class Sessions:
    """The instruments' sessions of one runner, opened on first use (or warmed)."""

    def __init__(self, client: LabClient, stack: contextlib.AsyncExitStack) -> None:
        self._client = client
        self._holders: dict[str, tuple[asyncio.Event, asyncio.Task[None]]] = {}
        self._sessions: dict[str, asyncio.Future[Any]] = {}
        stack.push_async_callback(self.close)

    async def get(self, name: str) -> Any:
        """``name``'s session, its server started (or reached) the first time it is asked."""
        if name not in self._sessions:
            self._sessions[name] = self._hold(name)
        return await asyncio.shield(self._sessions[name])

    async def warm(self, names: Iterable[str]) -> None:
        """Start opening these sessions now, side by side; return once each one's server
        process is spawned (or its connection made, or it failed: the failure is for the
        first caller of :meth:`get` to see), not when it answers."""
        spawned = []
        for name in names:
            if name in self._sessions or name not in self._client.connections:
                continue
            connected = asyncio.Event()
            self._sessions[name] = self._hold(name, connected)
            self._sessions[name].add_done_callback(_seen)
            spawned.append(connected.wait())
        await asyncio.gather(*spawned)

    async def open_all(self, names: Iterable[str]) -> None:
        """Open these sessions now and wait until every one answers."""
        await asyncio.gather(*(self.get(n) for n in names))

    async def restart(self, name: str) -> None:
        """Open ``name``'s session again (its server died): the old one is closed first."""
        held = self._holders.get(name)
        if held is not None:
            held[0].set()
            await asyncio.gather(held[1], return_exceptions=True)
        self._sessions[name] = self._hold(name)
        await self.get(name)

    async def close(self) -> None:
        for stop, _ in self._holders.values():
            stop.set()
        await asyncio.gather(*(t for _, t in self._holders.values()), return_exceptions=True)

    def _hold(self, name: str, connected: asyncio.Event | None = None) -> asyncio.Future[Any]:
        """Open ``name``'s session in a task of its own; the future gets the session
        (``connected`` is set once its server process is spawned, or the open failed)."""
        stop = asyncio.Event()
        got: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        on_connected = None if connected is None else connected.set

        async def hold() -> None:
            try:
                async with self._client.session(name, on_connected) as session:
                    got.set_result(session)
                    await stop.wait()
            except BaseException as exc:
                if not got.done():
                    got.set_exception(exc)
                else:
                    raise
            finally:
                if connected is not None:
                    connected.set()

        self._holders[name] = (stop, asyncio.create_task(hold()))
        return got


def _seen(future: asyncio.Future[Any]) -> None:
    """A warmed session that failed and was never asked for is not an unretrieved error."""
    if not future.cancelled():
        future.exception()
