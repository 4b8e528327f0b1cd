"""The MCP face of one instrument: tools, resources and prompts over an InstrumentRuntime.

The common tools live in ``_common_tools``, resources in ``_resources``, prompts (common and
the kind's own) in ``_prompts``; this module holds the tool table and the one error boundary.

Every tool answers with structured JSON. Failures are MCP tool errors (``isError: true``) whose
``structuredContent`` and text carry ``{ok: false, error: {code, detail, retriable, fix_hint,
defined, action_id}}``; no exception ever escapes as a traceback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl, BaseModel

from device_servers import strict
from device_servers.contract import COMMON_TOOLS, CommandResult
from device_servers.errors import Code, DeviceError
from device_servers.kind import kind_of
from device_servers.runtime import CALLER, InstrumentRuntime
from device_servers.server._common_tools import Handler, NoArgs, common_tools, estop_arguments
from device_servers.server._prompts import Prompts
from device_servers.server._resources import resource_json, resources, templates

log = logging.getLogger("labwright.server")

RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for resources/read of an unknown URI

_EXEC_NOTE = (
    " dry_run defaults to true: the call is validated and simulated on the twin and nothing "
    "moves; the result's `state` is the predicted state. To execute, pass dry_run=false and an "
    "action_id derived from (run, step, operation): the same action_id with the same arguments "
    "returns the recorded outcome and never acts twice (ACTION_ID_REUSED with other arguments; "
    "ACTION_IN_DOUBT if an earlier attempt's outcome was lost). Other errors: INVALID_ARGUMENT, "
    "UNKNOWN_LABWARE, UNKNOWN_WELL, OUT_OF_RANGE, POLICY_DENIED, APPROVAL_REQUIRED, "
    "REAL_EXECUTION_DISABLED, ESTOP_ACTIVE, STATE_STALE, DEVICE_BUSY, HARDWARE_TIMEOUT, "
    "CONNECTION_LOST, ADAPTER_FAULT. Every error carries a fix_hint."
)


def _schema(model: type[BaseModel], with_exec: bool = False) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    if with_exec:
        props = schema.setdefault("properties", {})
        props["action_id"] = {
            "type": "string",
            "maxLength": 200,
            "description": "Caller-made idempotency key; required to execute.",
        }
        props["dry_run"] = {
            "type": "boolean",
            "default": True,
            "description": "true (default): simulate only, nothing moves.",
        }
    schema["additionalProperties"] = False
    return schema


def _result(payload: dict[str, Any], error: bool = False) -> types.CallToolResult:
    payload = strict.clean(payload)  # an answer echoing a lone surrogate could not be sent
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload, default=str))],
        structuredContent=payload,
        isError=error,
    )


def error_result(exc: DeviceError, action_id: str | None = None) -> types.CallToolResult:
    return _result({"ok": False, "error": exc.to_payload(action_id)}, error=True)


class DeviceServer:
    """Tools, resources and prompts of one instrument, on the MCP low-level server."""

    def __init__(self, runtime: InstrumentRuntime) -> None:
        self.rt = runtime
        self.server: Server[Any, Any] = Server(
            f"labwright-{runtime.id}",
            version="0.1.0",
            instructions=(
                f"Labwright device server for {runtime.driver.kind} '{runtime.id}'"
                f"{' (simulated)' if runtime.simulated else ''}. Call get_state first. Every "
                "command dry-runs by default; execute with dry_run=false and an action_id."
            ),
        )
        self.tools: dict[str, tuple[types.Tool, type[BaseModel] | None, Handler]] = {}
        self.prompts = Prompts(runtime.id, kind_of(runtime.config.kind).prompts)
        self._register_common()
        assert tuple(self.tools) == COMMON_TOOLS, "the common tools are COMMON_TOOLS, in order"
        for name, model in runtime.driver.commands.items():
            self._register_command(name, model)
        self._wire()

    # ------------------------------------------------------------------ tools
    def _add(
        self,
        name: str,
        description: str,
        model: type[BaseModel] | None,
        handler: Handler,
        *,
        schema: dict[str, Any] | None = None,
        annotations: types.ToolAnnotations | None = None,
    ) -> None:
        tool = types.Tool(
            name=name,
            description=description,
            inputSchema=schema or _schema(model or NoArgs),
            annotations=annotations,
        )
        self.tools[name] = (tool, model, handler)

    def _register_common(self) -> None:
        for spec in common_tools(self.rt):
            self._add(
                spec.name, spec.description, spec.model, spec.handler, annotations=spec.annotations
            )

    def _register_command(self, name: str, model: type[BaseModel]) -> None:
        summary = getattr(model, "summary", name)

        async def handler(args: dict[str, Any], _name: str = name) -> dict[str, Any]:
            result = CommandResult.model_validate(await self.rt.command(_name, args))
            return result.model_dump(mode="json", exclude_unset=True)

        self._add(
            name,
            f"{summary}{_EXEC_NOTE}",
            None,
            handler,
            schema=_schema(model, with_exec=True),
            annotations=types.ToolAnnotations(
                destructiveHint=True, idempotentHint=True, openWorldHint=False
            ),
        )

    def _caller(self) -> str:
        """Who this request comes from, as its MCP session says (for the audit trail)."""
        try:
            ctx = self.server.request_context
        except LookupError:
            return "client:direct"
        params = getattr(ctx.session, "client_params", None)
        name = params.clientInfo.name if params is not None else "unknown"
        over = "@http" if getattr(ctx, "request", None) is not None else ""
        return f"client:{strict.clean_text(str(name))[:64]}{over}"

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """Dispatch one tool call; every failure becomes a structured error."""
        token = CALLER.set(self._caller())
        try:
            return await self._call(name, arguments)
        finally:
            CALLER.reset(token)

    async def _call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        arguments = arguments or {}
        if name == "emergency_stop":  # never refused, whatever else came with it
            return _result(await self.rt.emergency_stop(**estop_arguments(arguments)))
        action_id = arguments.get("action_id") if isinstance(arguments, dict) else None
        action_id = action_id if isinstance(action_id, str) else None
        entry = self.tools.get(name)
        try:
            strict.check_json(name, "tool name")
            strict.check_json(arguments)
            if entry is None:
                raise DeviceError(
                    Code.INVALID_ARGUMENT,
                    f"unknown tool {name!r}",
                    f"tools: {', '.join(sorted(self.tools))}",
                )
            _, model, handler = entry
            if model is not None:
                hint = "fix the arguments as the input schema describes"
                args = strict.validate(model, arguments, name, hint).model_dump()
            else:
                args = dict(arguments)
                if self.rt.driver.commands.get(name) is None and args:
                    raise DeviceError(
                        Code.INVALID_ARGUMENT, f"{name} takes no arguments", "call it with {}"
                    )
            return _result(await handler(args))
        except DeviceError as exc:
            return error_result(exc, action_id)
        except Exception as exc:  # the last line of defence: never a traceback to a client
            log.exception("tool %s failed", name)
            fault = DeviceError(
                Code.ADAPTER_FAULT,
                f"{type(exc).__name__}: {exc}",
                "stop and ask a person to check the instrument",
                defined=False,
            )
            return error_result(fault, action_id)

    # ------------------------------------------------------------------ wiring
    def _wire(self) -> None:
        srv = self.server

        @srv.list_tools()
        async def _list_tools() -> list[types.Tool]:
            return [t for t, _, _ in self.tools.values()]

        @srv.call_tool(validate_input=False)
        async def _call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            return await self.call(name, arguments)

        @srv.list_resources()
        async def _list_resources() -> list[types.Resource]:
            return resources(self.rt)

        @srv.list_resource_templates()
        async def _list_templates() -> list[types.ResourceTemplate]:
            return templates(self.rt)

        @srv.read_resource()
        async def _read_resource(uri: AnyUrl) -> Iterable[ReadResourceContents]:
            try:
                data = resource_json(self.rt, str(uri))
            except ValueError as exc:  # else the SDK answers with JSON-RPC error code 0
                raise McpError(
                    types.ErrorData(
                        code=RESOURCE_NOT_FOUND, message=str(exc), data={"uri": str(uri)}
                    )
                ) from exc
            return [
                ReadResourceContents(
                    content=json.dumps(data, default=str), mime_type="application/json"
                )
            ]

        @srv.list_prompts()
        async def _list_prompts() -> list[types.Prompt]:
            return self.prompts.listed()

        @srv.get_prompt()
        async def _get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
            try:
                return self.prompts.get(name, arguments or {})
            except ValueError as exc:
                raise McpError(
                    types.ErrorData(code=types.INVALID_PARAMS, message=str(exc))
                ) from exc


def build_server(runtime: InstrumentRuntime) -> Server[Any, Any]:
    """The MCP server of a started runtime."""
    return DeviceServer(runtime).server
