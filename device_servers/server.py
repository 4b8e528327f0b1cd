"""The MCP face of one instrument: tools, resources and prompts over an InstrumentRuntime.

Every tool answers with structured JSON. Failures are MCP tool errors (``isError: true``) whose
``structuredContent`` and text carry ``{ok: false, error: {code, detail, retriable, fix_hint,
defined, action_id}}``; no exception ever escapes as a traceback.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, ClassVar

import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl, BaseModel, ConfigDict, Field, ValidationError

from device_servers.errors import Code, DeviceError, pydantic_detail
from device_servers.runtime import InstrumentRuntime

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
    since_seq: int = Field(default=0, ge=0)
    max: int = Field(default=100, ge=1, le=1000)


class RunIdArgs(_Args):
    run_id: str


class ResetEstopArgs(_Args):
    action_id: str = Field(min_length=1, max_length=200)


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
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(payload, default=str))],
        structuredContent=payload,
        isError=error,
    )


def error_result(exc: DeviceError, action_id: str | None = None) -> types.CallToolResult:
    return _result({"ok": False, "error": exc.to_payload(action_id)}, error=True)


Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


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
        self._register_common()
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
        rt = self.rt
        ro = types.ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True)

        async def get_state(_: dict[str, Any]) -> dict[str, Any]:
            return {"ok": True, "simulated": rt.simulated, "state": rt.state()}

        async def read_back(_: dict[str, Any]) -> dict[str, Any]:
            return await rt.read_back()

        async def start_run(a: dict[str, Any]) -> dict[str, Any]:
            return {"ok": True, **(await rt.start_run(a["protocol"], a["dry_run"], a["run_key"]))}

        async def run_events(a: dict[str, Any]) -> dict[str, Any]:
            return {"ok": True, **rt.run_events(a["run_id"], a["since_seq"], a["max"])}

        async def get_run(a: dict[str, Any]) -> dict[str, Any]:
            return {"ok": True, **rt.get_run(a["run_id"])}

        async def cancel_run(a: dict[str, Any]) -> dict[str, Any]:
            return {"ok": True, **(await rt.cancel_run(a["run_id"]))}

        async def confirm_state(a: dict[str, Any]) -> dict[str, Any]:
            return await rt.confirm_state(a)

        async def emergency_stop(_: dict[str, Any]) -> dict[str, Any]:
            return await rt.emergency_stop()

        async def reset_estop(a: dict[str, Any]) -> dict[str, Any]:
            return await rt.reset_estop(a)

        self._add(
            "get_state",
            "The instrument's twin snapshot: labware, wells (volume_ul, contents), tip "
            "racks (tips_present), channels (tip, volume), plus stale, estop, busy run and "
            "in-doubt actions. Structured, read-only.",
            None,
            get_state,
            annotations=ro,
        )
        self._add(
            "read_back",
            "Re-read the instrument and adopt what it reports: clears STATE_STALE (after a "
            "restart, timeout or disconnect) unless the e-stop is latched, lists every "
            "deviation between belief and instrument, and annotates in-doubt actions. "
            "Moves nothing.",
            None,
            read_back,
            annotations=types.ToolAnnotations(
                readOnlyHint=False, destructiveHint=False, idempotentHint=True
            ),
        )
        self._add(
            "start_run",
            "Start a protocol (a list of this instrument's commands) in the background "
            "and return {run_id, status, simulated} at once; poll run_events. dry_run="
            "true (default) simulates on the twin; dry_run=false first simulates the whole "
            "protocol and refuses to start if any step fails (the step's error code). The "
            "same run_key returns the same run_id, never a second run.",
            StartRunArgs,
            start_run,
            annotations=types.ToolAnnotations(destructiveHint=True, idempotentHint=True),
        )
        self._add(
            "run_events",
            "Events of a run after since_seq (at most max): {events, next_seq, status}. "
            "The log is append-only and durable: a reconnecting client rebuilds "
            "everything with since_seq=0. RUN_NOT_FOUND for an unknown run.",
            RunEventsArgs,
            run_events,
            annotations=ro,
        )
        self._add(
            "get_run",
            "A run's status, steps done and error (RUN_NOT_FOUND if unknown).",
            RunIdArgs,
            get_run,
            annotations=ro,
        )
        self._add(
            "cancel_run",
            "Cancel a run: stops before its next step and aborts the backend's current "
            "operation. Idempotent: a finished run is returned as it is.",
            RunIdArgs,
            cancel_run,
            annotations=types.ToolAnnotations(destructiveHint=False, idempotentHint=True),
        )
        self._add(
            "emergency_stop",
            "Stop the instrument now: aborts the current operation, cancels runs and "
            "latches ESTOP_ACTIVE so nothing moves until a person resets it. Never gated, "
            "never needs approval.",
            None,
            emergency_stop,
            annotations=types.ToolAnnotations(destructiveHint=False, idempotentHint=True),
        )
        self._add(
            "confirm_state",
            "A person confirms that the twin (see get_state / read_back) matches the real "
            "instrument, clearing STATE_STALE when the instrument cannot report everything "
            "itself. Requires a person's approval of this action_id (APPROVAL_REQUIRED until "
            "`labwright approve-action`); ESTOP_ACTIVE while the e-stop is latched.",
            ResetEstopArgs,
            confirm_state,
            annotations=types.ToolAnnotations(destructiveHint=False),
        )
        self._add(
            "reset_estop",
            "Clear a latched emergency stop. Requires a person's approval of this "
            "action_id (APPROVAL_REQUIRED until `labwright approve-action` is run); "
            "afterwards the twin is STATE_STALE until read_back.",
            ResetEstopArgs,
            reset_estop,
            annotations=types.ToolAnnotations(destructiveHint=True),
        )

    def _register_command(self, name: str, model: type[BaseModel]) -> None:
        summary = getattr(model, "summary", name)

        async def handler(args: dict[str, Any], _name: str = name) -> dict[str, Any]:
            return await self.rt.command(_name, args)

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

    async def call(self, name: str, arguments: dict[str, Any] | None) -> types.CallToolResult:
        """Dispatch one tool call; every failure becomes a structured error."""
        arguments = arguments or {}
        action_id = arguments.get("action_id") if isinstance(arguments, dict) else None
        action_id = action_id if isinstance(action_id, str) else None
        entry = self.tools.get(name)
        try:
            if entry is None:
                raise DeviceError(
                    Code.INVALID_ARGUMENT,
                    f"unknown tool {name!r}",
                    f"tools: {', '.join(sorted(self.tools))}",
                )
            _, model, handler = entry
            if model is not None:
                try:
                    args = model.model_validate(arguments).model_dump()
                except ValidationError as exc:
                    raise DeviceError(
                        Code.INVALID_ARGUMENT,
                        f"{name}: {pydantic_detail(exc)}",
                        "fix the arguments as the input schema describes",
                    ) from exc
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

    # ------------------------------------------------------------------ resources
    def _resource_json(self, uri: str) -> dict[str, Any]:
        prefix = f"lab://{self.rt.id}/"
        if not uri.startswith(prefix):
            raise ValueError(f"unknown resource {uri}")
        path = uri[len(prefix) :]
        if path == "state":
            return self.rt.state()
        if path == "policy":
            return {"instrument": self.rt.id, "rules": self.rt.policy.describe()}
        kind, _, ident = path.partition("/")
        if kind in ("labware", "tips") and ident:
            item = self.rt.driver.describe_labware(self.rt.twin, ident)
            if item is None or (kind == "tips") != (item.get("kind") == "tip_rack"):
                raise ValueError(f"no {kind} {ident!r} on {self.rt.id}")
            return {"id": ident, **item}
        if kind == "runs" and ident:
            try:
                return self.rt.get_run(ident)
            except DeviceError as exc:
                raise ValueError(exc.detail) from exc
        raise ValueError(f"unknown resource {uri}")

    def resources(self) -> list[types.Resource]:
        base = f"lab://{self.rt.id}"
        out = [
            types.Resource(
                uri=AnyUrl(f"{base}/state"),
                name="state",
                description="Twin snapshot",
                mimeType="application/json",
            ),
            types.Resource(
                uri=AnyUrl(f"{base}/policy"),
                name="policy",
                description="Safety rules enforced by this server",
                mimeType="application/json",
            ),
        ]
        for lw_id, lw in self.rt.twin.snapshot()["labware"].items():
            kind = "tips" if lw["kind"] == "tip_rack" else "labware"
            out.append(
                types.Resource(
                    uri=AnyUrl(f"{base}/{kind}/{lw_id}"), name=lw_id, mimeType="application/json"
                )
            )
        return out

    def templates(self) -> list[types.ResourceTemplate]:
        base = f"lab://{self.rt.id}"
        return [
            types.ResourceTemplate(
                uriTemplate=f"{base}/labware/{{labware_id}}",
                name="labware",
                mimeType="application/json",
            ),
            types.ResourceTemplate(
                uriTemplate=f"{base}/tips/{{rack_id}}", name="tips", mimeType="application/json"
            ),
            types.ResourceTemplate(
                uriTemplate=f"{base}/runs/{{run_id}}", name="runs", mimeType="application/json"
            ),
        ]

    # ------------------------------------------------------------------ prompts
    PROMPTS: ClassVar[dict[str, tuple[str, list[types.PromptArgument]]]] = {
        "serial_dilution": (
            "Standard procedure: an n-step k-fold serial dilution along a row of a plate.",
            [
                types.PromptArgument(name="plate", required=True),
                types.PromptArgument(name="row", description="Row letter, e.g. A", required=True),
                types.PromptArgument(name="final_volume_ul", required=True),
                types.PromptArgument(name="fold", description="Default 2"),
            ],
        ),
        "recover_from_error": (
            "Standard procedure after a device error: make safe, read back, decide.",
            [types.PromptArgument(name="code", description="The error code", required=True)],
        ),
    }

    # A prompt listed here is offered only by servers of these instrument kinds.
    PROMPT_KINDS: ClassVar[dict[str, set[str]]] = {"serial_dilution": {"liquid_handler"}}

    def prompts(self) -> dict[str, tuple[str, list[types.PromptArgument]]]:
        """The standard procedures of this instrument (a reader has no serial dilution)."""
        kind = self.rt.driver.kind
        return {
            n: p
            for n, p in self.PROMPTS.items()
            if n not in self.PROMPT_KINDS or kind in self.PROMPT_KINDS[n]
        }

    def prompt(self, name: str, args: dict[str, str]) -> types.GetPromptResult:
        if name not in self.prompts():
            raise ValueError(f"unknown prompt {name!r} on {self.rt.id}")
        if name == "serial_dilution":
            missing = [a for a in ("plate", "row", "final_volume_ul") if not args.get(a)]
            if missing:
                raise ValueError(f"serial_dilution needs: {', '.join(missing)}")
            plate, row = args["plate"], args["row"].upper()
            fold = float(args.get("fold") or 2)
            final = float(args["final_volume_ul"])
            moved = final / (fold - 1) if fold > 1 else final
            text = (
                f"Serial dilution on {self.rt.id}, plate {plate}, row {row}, {fold:g}-fold, "
                f"{final:g} uL final volume per well:\n"
                f"1. get_state; check {plate}:{row}1 holds at least {final + moved:g} uL of the "
                f"stock and {row}2..{row}12 hold {final:g} uL of diluent.\n"
                f"2. For i from 1 to 11: transfer {moved:g} uL from {row}i to {row}(i+1) with "
                "mix_after=3, a new tip each time.\n"
                f"3. Remove {moved:g} uL from {row}12 so every well ends at {final:g} uL.\n"
                "4. Dry-run the whole list with start_run(dry_run=true); fix any error; then "
                "execute with dry_run=false and a run_key."
            )
        elif name == "recover_from_error":
            code = args.get("code") or "?"
            text = (
                f"After error {code} on {self.rt.id}: 1. Do not re-send the failed action. "
                "2. If the error is undefined (defined=false) or the state is stale, call "
                "read_back and review the deviations. 3. If it is defined, follow its fix_hint, "
                "dry-run the corrected step, then execute it under a NEW action_id. 4. If an "
                "action is ACTION_IN_DOUBT, compare read_back with what the action would have "
                "done and let a person decide."
            )
        else:
            raise ValueError(f"unknown prompt {name!r}")
        return types.GetPromptResult(
            description=self.PROMPTS[name][0],
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

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
            return self.resources()

        @srv.list_resource_templates()
        async def _list_templates() -> list[types.ResourceTemplate]:
            return self.templates()

        @srv.read_resource()
        async def _read_resource(uri: AnyUrl) -> Iterable[ReadResourceContents]:
            try:
                data = self._resource_json(str(uri))
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
            return [
                types.Prompt(name=n, description=d, arguments=a)
                for n, (d, a) in self.prompts().items()
            ]

        @srv.get_prompt()
        async def _get_prompt(name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
            try:
                return self.prompt(name, arguments or {})
            except ValueError as exc:
                raise McpError(
                    types.ErrorData(code=types.INVALID_PARAMS, message=str(exc))
                ) from exc


def build_server(runtime: InstrumentRuntime) -> Server[Any, Any]:
    """The MCP server of a started runtime."""
    return DeviceServer(runtime).server
