"""MCP over stdio, answering every request, even one the SDK's JSON reader cannot read.

The SDK's stdio transport reads each line with pydantic's JSON parser, which refuses a lone
surrogate escape (``"\\ud800"``: valid JSON text, invalid Unicode) and a few other oddities;
the line then becomes an exception with no request id, and the client waits out its timeout.
Here such a line is read again with the standard library's parser: a request (it has an id
and a method) is answered at once, a ``tools/call`` with the structured INVALID_ARGUMENT every
tool error has, any other method with a JSON-RPC "invalid params" error. Everything else is
what the SDK does (``mcp.server.stdio``): UTF-8 in with replacement of invalid bytes, one
JSON message per line out.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from device_servers import strict
from device_servers.errors import Code, DeviceError, ValidationFailed
from device_servers.server import error_result

INVALID_PARAMS = -32602


def answer_unreadable(line: str) -> types.JSONRPCMessage | None:
    """The answer to a line the SDK could not read, when it was a request; else None."""
    try:
        raw = json.loads(line)
    except ValueError:
        return None
    if not isinstance(raw, dict) or "method" not in raw or "id" not in raw:
        return None
    request_id = raw["id"]
    if isinstance(request_id, str):
        request_id = strict.clean_text(request_id)
    elif not isinstance(request_id, int) or isinstance(request_id, bool):
        return None  # no id the client could match an answer to
    try:
        strict.check_json(raw.get("params"), "params")
        problem: DeviceError = ValidationFailed(
            Code.INVALID_ARGUMENT, "the request could not be read", "send a valid MCP request"
        )
    except DeviceError as exc:
        problem = exc
    if raw["method"] == "tools/call":
        result = error_result(problem).model_dump(mode="json", by_alias=True, exclude_none=True)
        return types.JSONRPCMessage(
            types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)
        )
    error = types.ErrorData(
        code=INVALID_PARAMS,
        message=strict.clean_text(problem.detail),
    )
    return types.JSONRPCMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


@contextlib.asynccontextmanager
async def stdio_streams(
    stdout: anyio.AsyncFile[str],
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]
]:
    """The read and write streams of an MCP server on this process's stdin and ``stdout``."""
    stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    read_writer: MemoryObjectSendStream[SessionMessage | Exception]
    read_stream: MemoryObjectReceiveStream[SessionMessage | Exception]
    read_writer, read_stream = anyio.create_memory_object_stream(0)
    write_stream: MemoryObjectSendStream[SessionMessage]
    write_reader: MemoryObjectReceiveStream[SessionMessage]
    write_stream, write_reader = anyio.create_memory_object_stream(0)
    answers = write_stream.clone()  # the reader's own answers; closed when stdin ends

    async def reader() -> None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async with read_writer, answers:
                async for line in stdin:
                    try:
                        message = types.JSONRPCMessage.model_validate_json(line)
                    except Exception as exc:
                        answer = answer_unreadable(line)
                        if answer is None:
                            await read_writer.send(exc)
                        else:
                            await answers.send(SessionMessage(answer))
                        continue
                    await read_writer.send(SessionMessage(message))

    async def writer() -> None:
        with contextlib.suppress(anyio.ClosedResourceError):
            async with write_reader:
                async for session_message in write_reader:
                    text = session_message.message.model_dump_json(by_alias=True, exclude_none=True)
                    await stdout.write(text + "\n")
                    await stdout.flush()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        yield read_stream, write_stream
