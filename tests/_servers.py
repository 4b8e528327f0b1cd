"""Real ``labwright serve`` subprocesses for tests: stdio sessions and HTTP servers.

Every wait is bounded; every process started here is killed by the context that started it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import mcp.types as types
from conftest import ROOT
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

STARTUP_S = 30.0


def server_env() -> dict[str, str]:
    """The test process's environment without any Labwright overrides."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LABWRIGHT_")}
    env["PYTHONUNBUFFERED"] = "1"
    return env


def serve_args(lab_file: Path, *extra: str) -> list[str]:
    return ["-m", "labwright", "serve", "lh1", "--config", str(lab_file), *extra]


class StdioTrace:
    """Collects anything on the server's stdout that was not an MCP message."""

    def __init__(self) -> None:
        self.garbage: list[Exception] = []

    async def __call__(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.garbage.append(message)


@contextlib.asynccontextmanager
async def stdio_session(
    lab_file: Path, errlog: IO[str], trace: StdioTrace | None = None
) -> AsyncIterator[ClientSession]:
    """An initialized MCP session with ``labwright serve lh1`` spawned over stdio."""
    params = StdioServerParameters(
        command=sys.executable, args=serve_args(lab_file), env=server_env(), cwd=str(ROOT)
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, message_handler=trace) as session,
    ):
        with anyio.fail_after(STARTUP_S):
            await session.initialize()
        yield session


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpServer:
    """``labwright serve lh1 --transport http`` in a subprocess this test owns."""

    def __init__(self, lab_file: Path, log: Path, *, token: str | None = None, extra=()) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        args = serve_args(lab_file, "--transport", "http", "--port", str(self.port), *extra)
        if token is not None:
            args += ["--token", token]
        self._log = log.open("a")
        self.proc = subprocess.Popen(
            [sys.executable, *args],
            cwd=ROOT,
            env=server_env(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, timeout: float = STARTUP_S) -> None:
        """Poll (bounded) until the port accepts connections; fail if the process died."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited with {self.proc.returncode} before listening")
            with socket.socket() as sock:
                sock.settimeout(0.2)
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise AssertionError(f"server did not listen on {self.port} within {timeout} s")

    def kill(self) -> None:
        """SIGKILL: no cleanup, no ledger outcome, exactly like a power cut of the host."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)
        self._log.close()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()


@contextlib.contextmanager
def http_server(lab_file: Path, log: Path, **kwargs: Any) -> Iterator[HttpServer]:
    server = HttpServer(lab_file, log, **kwargs)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@contextlib.asynccontextmanager
async def http_session(url: str, token: str | None = None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    async with (
        streamablehttp_client(url, headers=headers, timeout=10) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(STARTUP_S):
            await session.initialize()
        yield session


def tool_names(result: types.ListToolsResult) -> set[str]:
    return {t.name for t in result.tools}


class RawStdio:
    """``labwright serve`` over stdio spoken to in raw JSON-RPC lines, so a test can send
    what no well-behaved client library would (a lone surrogate escape, invalid UTF-8)."""

    def __init__(self, lab_file: Path, instrument: str = "lh1") -> None:
        args = ["-m", "labwright", "serve", instrument, "--config", str(lab_file)]
        self.proc = subprocess.Popen(
            [sys.executable, *args],
            cwd=ROOT,
            env=server_env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._next_id = 0

    def send(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()

    def answer(self, request_id: int, timeout: float = 20.0) -> dict[str, Any] | None:
        """The response to ``request_id`` (None if none came within ``timeout`` seconds)."""
        import json
        import selectors

        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline:
                if not sel.select(timeout=max(0.0, deadline - time.monotonic())):
                    return None
                line = self.proc.stdout.readline()
                if not line:
                    return None
                message = json.loads(line)
                if message.get("id") == request_id:
                    return dict(message)
        return None

    def request(
        self, method: str, params_json: str, timeout: float = 20.0
    ) -> dict[str, Any] | None:
        """Send one request whose params are given as raw JSON text; wait for its answer."""
        self._next_id += 1
        body = (
            f'{{"jsonrpc":"2.0","id":{self._next_id},"method":"{method}","params":{params_json}}}'
        )
        self.send(body.encode("utf-8", "surrogatepass"))
        return self.answer(self._next_id, timeout)

    def initialize(self) -> None:
        init = (
            '{"protocolVersion":"2025-06-18","capabilities":{},'
            '"clientInfo":{"name":"raw","version":"0"}}'
        )
        assert self.request("initialize", init, timeout=STARTUP_S) is not None
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
