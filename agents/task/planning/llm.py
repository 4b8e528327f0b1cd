"""The LLM planner: any chat model turns a request into the same Plan / Clarification / Refusal.

The model is shown the lab's instruments with their commands (each instrument server's own MCP
tool list: name, description, input schema), the current lab state and the rules, and answers
with one JSON object (bare or in a ```json fence). The answer is read with the same pydantic
types every planner speaks and then checked against the lab: each step's instrument must exist
and its command must be one of that instrument's plan commands, with arguments its schema
knows. An unusable answer is sent back once with the reason; a second unusable answer becomes
a :class:`Clarification` saying so. Model mistakes never raise, and nothing here executes: the
plan still goes through simulation and a person's approval.

The JSON-text path works with any chat model (``with_structured_output`` is not used: free-form
``args`` objects are not portable across providers' strict schema modes).

Errors::

    PlannerUnavailable  the model could not be built or called (configuration, network, quota)
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import TypeAdapter, ValidationError

from agents.task import prompts
from agents.task.planning.models import Clarification, LabView, Plan, PlanResult, Refusal
from device_servers.contract import COMMON_TOOLS

Result = Plan | Clarification | Refusal
Tools = Mapping[str, Sequence[Mapping[str, Any]]]

MODEL_ENV = "LABWRIGHT_MODEL"
ATTEMPTS = 2  # the first answer, and one more after the model is told what was wrong

# Server tools that are not plan steps: reading, run control, safety. A planner plans commands.
NOT_PLAN_STEPS = frozenset(COMMON_TOOLS)
RUNTIME_ARGS = frozenset({"dry_run", "action_id"})

_RESULT: TypeAdapter[Result] = TypeAdapter(PlanResult)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.S)
# Command descriptions end with the server's note on dry_run/action_id; the runtime sets those,
# so the planner is not told how to pass them.
_EXEC_NOTE = re.compile(r"\s*dry_run defaults to true\b.*\Z", re.S)
_MAX_ERRORS = 8


class PlannerUnavailable(RuntimeError):
    """The planning model could not be built or called; the request was not planned."""


class _Unusable(ValueError):
    """The model's answer cannot be used as a plan, a clarification or a refusal."""


class LLMPlanner:
    """Plans with a chat model; same interface and result types as the rule planner.

    Args:
        model: A chat model, or a ``"provider:model"`` string for ``init_chat_model`` (built
            on first use, so constructing the planner needs no network or API key).
        tools: Instrument id -> that instrument's MCP tool list (``{name, description,
            inputSchema}``, e.g. from ``session.list_tools()``). An instrument without a list
            is shown with the command names of its :class:`InstrumentView` only.
    """

    def __init__(self, model: BaseChatModel | str, tools: Tools | None = None) -> None:
        self._spec = model if isinstance(model, str) else None
        self._model = None if isinstance(model, str) else model
        self.tools: dict[str, list[dict[str, Any]]] = {
            iid: [dict(tool) for tool in listed] for iid, listed in (tools or {}).items()
        }

    @classmethod
    def from_env(
        cls, tools: Tools | None = None, env: Mapping[str, str] | None = None
    ) -> LLMPlanner | None:
        """A planner for the model named by ``LABWRIGHT_MODEL``, or None when it is unset/blank.

        None means "no model configured": the caller uses the rule planner.
        """
        spec = (os.environ if env is None else env).get(MODEL_ENV, "").strip()
        return cls(spec, tools) if spec else None

    @property
    def model(self) -> BaseChatModel:
        """The chat model, built from the ``provider:model`` string on first use."""
        if self._model is None:
            from langchain.chat_models import init_chat_model

            try:
                self._model = init_chat_model(self._spec)  # type: ignore[assignment]
            except Exception as exc:  # a missing provider package, an unknown provider, ...
                raise PlannerUnavailable(f"cannot build chat model {self._spec!r}: {exc}") from exc
        assert self._model is not None
        return self._model

    # ------------------------------------------------------------------ planning
    def plan(self, request: str, lab: LabView) -> Result:
        """Turn ``request`` into a plan for ``lab``, a question, or a refusal."""
        return self._converse(self.messages(request, lab), request, lab)

    def replan(self, request: str, lab: LabView, previous: Plan, errors: list[str]) -> Result:
        """Plan again after ``previous`` failed simulation with ``errors``."""
        return self._converse(self.messages(request, lab, previous, errors), request, lab)

    async def aplan(self, request: str, lab: LabView) -> Result:
        """:meth:`plan` without blocking the event loop."""
        return await self._aconverse(self.messages(request, lab), request, lab)

    async def areplan(
        self, request: str, lab: LabView, previous: Plan, errors: list[str]
    ) -> Result:
        """:meth:`replan` without blocking the event loop."""
        return await self._aconverse(self.messages(request, lab, previous, errors), request, lab)

    def messages(
        self,
        request: str,
        lab: LabView,
        previous: Plan | None = None,
        errors: Sequence[str] = (),
    ) -> list[BaseMessage]:
        """The system and human messages the model is first sent (pure; for tests and logs)."""
        system = prompts.PLANNER_SYSTEM.format(
            data_warning=prompts.DATA_WARNING,
            schema=json.dumps(_RESULT.json_schema(), separators=(",", ":")),
        )
        human = prompts.PLANNER_REQUEST.format(
            instruments=_data(_instruments(lab, self.tools), depth=4),
            lab_state=_data(_lab_state(lab)),
            request=_data(request),
        )
        if previous is not None:
            human += "\n" + prompts.REPLAN.format(
                previous_plan=_data(previous.model_dump(mode="json")),
                errors=_data(list(errors)),
            )
        return [SystemMessage(content=system), HumanMessage(content=human)]

    def _converse(self, messages: list[BaseMessage], request: str, lab: LabView) -> Result:
        error = ""
        for _ in range(ATTEMPTS):
            try:
                reply = self.model.invoke(messages)
            except PlannerUnavailable:
                raise
            except Exception as exc:
                raise PlannerUnavailable(f"the planning model failed: {exc}") from exc
            text = _text(reply)
            try:
                return accept(text, request, lab, self.tools)
            except _Unusable as exc:
                error = str(exc)
                messages = _retry(messages, text, error)
        return _unusable(request, error)

    async def _aconverse(self, messages: list[BaseMessage], request: str, lab: LabView) -> Result:
        error = ""
        for _ in range(ATTEMPTS):
            try:
                reply = await self.model.ainvoke(messages)
            except PlannerUnavailable:
                raise
            except Exception as exc:
                raise PlannerUnavailable(f"the planning model failed: {exc}") from exc
            text = _text(reply)
            try:
                return accept(text, request, lab, self.tools)
            except _Unusable as exc:
                error = str(exc)
                messages = _retry(messages, text, error)
        return _unusable(request, error)


# ---------------------------------------------------------------------- reading the answer
def accept(text: str, request: str, lab: LabView, tools: Tools | None = None) -> Result:
    """Read a model's answer into a result for ``lab``; raise ``ValueError`` if it is unusable.

    ``request`` is always the caller's (a model's echo of it is not trusted); plan step ids are
    renumbered s1, s2, ... in order.
    """
    obj = _json_object(text)
    obj["request"] = request
    obj.setdefault("kind", _guess_kind(obj))
    try:
        result = _RESULT.validate_python(obj)
    except ValidationError as exc:
        raise _Unusable(f"it does not match the schema: {_describe(exc)}") from exc
    if isinstance(result, Clarification) and not result.question.strip():
        raise _Unusable("the clarification has no question")
    if isinstance(result, Refusal) and not result.reason.strip():
        raise _Unusable("the refusal gives no reason")
    if isinstance(result, Plan):
        _check_steps(result, plan_commands(lab, tools or {}))
        steps = [s.model_copy(update={"id": f"s{i}"}) for i, s in enumerate(result.steps, 1)]
        result = result.model_copy(update={"steps": steps})
    return result


def plan_commands(lab: LabView, tools: Tools) -> dict[str, dict[str, dict[str, Any] | None]]:
    """Instrument id -> its plan commands -> input schema without runtime args (None: unknown).

    The commands come from the instrument's tool list when there is one, else from its view.
    """
    out: dict[str, dict[str, dict[str, Any] | None]] = {}
    for iid, inst in lab.instruments.items():
        listed = tools.get(iid)
        if listed is None:
            out[iid] = {c: None for c in inst.commands if c not in NOT_PLAN_STEPS}
            continue
        out[iid] = {
            str(t["name"]): _plan_schema(t.get("inputSchema"))
            for t in listed
            if t.get("name") and t["name"] not in NOT_PLAN_STEPS
        }
    return out


def _json_object(text: str) -> dict[str, Any]:
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])  # prose around a bare object
    for candidate in candidates:
        try:
            value = json.loads(candidate.strip(), parse_constant=_no_constant)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    raise _Unusable("it is not one JSON object (bare or in a ```json block)")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a plan may hold")


def _guess_kind(obj: Mapping[str, Any]) -> str:
    for key, kind in (("steps", "plan"), ("question", "clarification"), ("reason", "refusal")):
        if key in obj:
            return kind
    return "plan"


def _describe(exc: ValidationError) -> str:
    parts = [
        f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}"
        for e in exc.errors(include_url=False, include_input=False)
    ]
    more = len(parts) - _MAX_ERRORS
    return "; ".join(parts[:_MAX_ERRORS]) + (f"; and {more} more" if more > 0 else "")


def _check_steps(plan: Plan, commands: dict[str, dict[str, dict[str, Any] | None]]) -> None:
    errors: list[str] = []
    for n, step in enumerate(plan.steps, 1):
        where = f"step {n} ({step.id})"
        known = commands.get(step.instrument)
        if known is None:
            errors.append(
                f"{where}: unknown instrument {step.instrument!r} "
                f"(instruments: {', '.join(sorted(commands)) or 'none'})"
            )
            continue
        if step.command not in known:
            errors.append(
                f"{where}: {step.instrument} has no command {step.command!r} "
                f"(its commands: {', '.join(sorted(known)) or 'none'})"
            )
            continue
        errors.extend(f"{where}: {e}" for e in _check_args(step.args, known[step.command]))
    if errors:
        more = len(errors) - _MAX_ERRORS
        raise _Unusable(
            "; ".join(errors[:_MAX_ERRORS]) + (f"; and {more} more" if more > 0 else "")
        )


def _check_args(args: Mapping[str, Any], schema: Mapping[str, Any] | None) -> list[str]:
    errors = []
    runtime = sorted(RUNTIME_ARGS & set(args))
    if runtime:
        errors.append(f"{', '.join(runtime)} are set by the runtime, not by the plan")
    if schema is None:
        return errors
    props = schema.get("properties", {})
    unknown = sorted(set(args) - set(props) - RUNTIME_ARGS)
    if unknown and schema.get("additionalProperties") is False:
        errors.append(
            f"unknown argument(s) {', '.join(unknown)} (arguments: {', '.join(props) or 'none'})"
        )
    missing = [name for name in schema.get("required", []) if name not in args]
    if missing:
        errors.append(f"missing argument(s) {', '.join(missing)}")
    return errors


def _retry(messages: list[BaseMessage], text: str, error: str) -> list[BaseMessage]:
    return [
        *messages,
        AIMessage(content=text),
        HumanMessage(content=prompts.RETRY.format(error=error)),
    ]


def _unusable(request: str, error: str) -> Clarification:
    return Clarification(
        request=request,
        question=prompts.UNUSABLE_QUESTION.format(error=error),
        missing=["a usable plan"],
        options=["rephrase the request", "plan it with the rule planner"],
    )


def _text(reply: Any) -> str:
    if isinstance(reply, BaseMessage):
        return reply.text
    return reply if isinstance(reply, str) else str(reply)


# ---------------------------------------------------------------------- rendering the prompt
def _data(value: Any, depth: int = 2) -> str:
    """JSON with ``<``, ``>`` and ``&`` escaped: data cannot close its section or open another.

    The outer ``depth`` levels of objects and arrays get one item per line, the rest stays on
    one line: readable for the model without the token cost of indenting every schema.
    """
    text = _layout(value, depth, "")
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _layout(value: Any, depth: int, pad: str) -> str:
    if depth <= 0 or not isinstance(value, dict | list) or not value:
        return json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
    inner = pad + " "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: " for k in value]
        parts = [
            k + _layout(v, depth - 1, inner) for k, v in zip(items, value.values(), strict=True)
        ]
        return "{\n" + ",\n".join(parts) + "\n" + pad + "}"
    parts = [inner + _layout(v, depth - 1, inner) for v in value]
    return "[\n" + ",\n".join(parts) + "\n" + pad + "]"


def _plan_schema(schema: Any) -> dict[str, Any] | None:
    if not isinstance(schema, Mapping):
        return None
    out = copy.deepcopy(dict(schema))
    out.pop("title", None)
    props = {k: v for k, v in out.get("properties", {}).items() if k not in RUNTIME_ARGS}
    out["properties"] = props
    if "required" in out:
        out["required"] = [r for r in out["required"] if r not in RUNTIME_ARGS]
    return out


def _instruments(lab: LabView, tools: Tools) -> dict[str, Any]:
    schemas = plan_commands(lab, tools)
    out: dict[str, Any] = {}
    for iid, inst in lab.instruments.items():
        listed = {str(t.get("name")): t for t in tools.get(iid, ())}
        commands: list[Any] = []
        for name, schema in schemas[iid].items():
            if name not in listed:
                commands.append(name)
                continue
            description = _EXEC_NOTE.sub("", str(listed[name].get("description") or ""))
            commands.append(
                {"name": name, "description": description, "input_schema": schema or {}}
            )
        out[iid] = {
            "kind": inst.kind,
            "location": inst.location,
            "limits": inst.limits,
            "commands": commands,
        }
    return out


def _lab_state(lab: LabView) -> dict[str, Any]:
    labware: dict[str, Any] = {}
    for lw in lab.labware.values():
        entry: dict[str, Any] = {
            "kind": lw.kind,
            "on": lw.instrument,
            "location": lw.location,
            "home": lw.home,
            "rows": lw.rows,
            "cols": lw.cols,
        }
        if lw.kind == "tip_rack":
            entry["tips_remaining"] = lw.tips_remaining
            if lw.tip_max_volume_ul:
                entry["tip_max_volume_ul"] = lw.tip_max_volume_ul
        else:
            entry["well_max_volume_ul"] = lw.well_max_volume_ul
            entry["wells"] = {
                name: {"volume_ul": w.volume_ul, "contents": w.contents}
                for name, w in lw.wells.items()
            }
        labware[lw.id] = entry
    occupied = {lw.location: lw.id for lw in lab.labware.values()}
    return {
        "labware": labware,
        "liquids": {
            name: [f"{lw}:{well} ({vol:g} uL)" for lw, well, vol in places]
            for name, places in lab.liquids().items()
        },
        "mover_locations": [
            {"location": loc, "holds": occupied.get(loc)} for loc in lab.mover_locations
        ],
        # How a plate reaches each place: what must hold, and which command makes it hold.
        "stations": [
            s.model_dump(mode="json", exclude_defaults=True) for s in lab.stations.values()
        ],
    }
