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

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import TypeAdapter, ValidationError

from agents.task import prompts
from agents.task.planning import _coverage
from agents.task.planning._llm_prompt import (
    RUNTIME_ARGS,
    Tools,
    _data,
    _instruments,
    _lab_state,
    plan_commands,
)
from agents.task.planning.models import Clarification, LabView, Plan, PlanResult, Refusal

Result = Plan | Clarification | Refusal

MODEL_ENV = "LABWRIGHT_MODEL"
ATTEMPTS = 2  # the first answer, and one more after the model is told what was wrong


_RESULT: TypeAdapter[Result] = TypeAdapter(PlanResult)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.S)
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
            clauses=_data(_coverage.clauses_of(request, lab.labware)),
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
        result = _renumber(result)
        gaps = _coverage.problems(result, lab.labware)
        if gaps:  # the same coverage check as the rule planner's: no clause may be dropped
            raise _Unusable("its trace does not cover the request: " + "; ".join(gaps))
    return result


def _renumber(plan: Plan) -> Plan:
    """Step ids s1, s2, ... in order, and the trace pointing at the new ids."""
    old = [s.id for s in plan.steps]
    if len(set(old)) != len(old):
        raise _Unusable("step ids must be unique (s1, s2, ...): the trace refers to them")
    new = {o: f"s{i}" for i, o in enumerate(old, 1)}
    steps = [s.model_copy(update={"id": new[s.id]}) for s in plan.steps]
    trace = [t.model_copy(update={"steps": [new.get(x, x) for x in t.steps]}) for t in plan.trace]
    return plan.model_copy(update={"steps": steps, "trace": trace})


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
