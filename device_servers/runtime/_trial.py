"""Simulation on a copy of the twin: parsing, the ``assume`` step, whole protocols.

Everything here is pure (no I/O, no waiting): the runtime's dry runs, the gate's preflight of
a protocol, recovery's re-expansion of an in-doubt action and ``labwright simulate`` all use it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from device_servers import strict
from device_servers.contract import Protocol, ProtocolStep
from device_servers.errors import Code, DeviceError, ValidationFailed
from device_servers.kind import Driver, Twin

# A simulation-only protocol step: what other instruments will have done by then.
ASSUME = "assume"


class Assume(BaseModel):
    """``{"command": "assume", "args": {...}}`` in a dry-run protocol.

    ``plate`` + ``location``: a plate arrives at (or, for ``location: null``, leaves) a place,
    moved by another instrument. ``status``: facts of other instruments, e.g.
    ``{"reader1": {"drawer_open": true}}``, for this instrument's policies.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: ClassVar[str] = "assume"

    plate: str | None = None
    location: str | None = None
    status: dict[str, dict[str, Any]] = Field(default_factory=dict)


def parse_assume(args: dict[str, Any]) -> Assume:
    hint = "assume takes {plate, location} and/or {status: {instrument: {fact: value}}}"
    return strict.validate(Assume, args, "assume", hint)


def command_name(cmd: BaseModel) -> str:
    """The tool name of a parsed command."""
    return str(getattr(type(cmd), "name", type(cmd).__name__))


def at_step(exc: DeviceError, index: int, label: str | None = None, **extra: Any) -> DeviceError:
    """Say which step of a protocol an error belongs to (``step 3 (aspirate): ...``)."""
    where = f"step {index}" + (f" ({label})" if label else "")
    exc.detail = f"{where}: {exc.detail}"
    exc.extra = {**exc.extra, "step": index, **extra}
    return exc


def parse_command(driver: Driver, name: str, args: dict[str, Any]) -> BaseModel:
    """One command of the driver's kind from its tool arguments."""
    model = driver.commands.get(name)
    if model is None:
        raise ValidationFailed(
            Code.INVALID_ARGUMENT,
            f"unknown command {name!r}",
            f"commands: {', '.join(sorted(driver.commands))}",
        )
    return strict.validate(
        model, args, name, "fix the arguments as the tool's input schema describes"
    )


def parse_protocol(driver: Driver, protocol: Any) -> tuple[Protocol, list[BaseModel]]:
    """A protocol and its parsed steps (``assume`` steps included)."""
    proto = parse_header(protocol)
    return proto, [parse_step(driver, i, step) for i, step in enumerate(proto.steps)]


def parse_header(protocol: Any) -> Protocol:
    """A protocol's shape, its steps not yet parsed as commands (see ``parse_step``)."""
    return strict.validate(
        Protocol, protocol, "protocol", "a protocol is {name, steps: [{command, args}]}"
    )


def parse_step(driver: Driver, index: int, step: ProtocolStep) -> BaseModel:
    """One step of a protocol (``assume`` or one of the driver's commands)."""
    if {"action_id", "dry_run"} & step.args.keys():
        raise ValidationFailed(
            Code.INVALID_ARGUMENT,
            f"step {index}: action_id and dry_run belong to the run",
            "leave them out of step arguments",
        )
    try:
        if step.command == ASSUME:
            return parse_assume(step.args)
        return parse_command(driver, step.command, step.args)
    except DeviceError as exc:
        at_step(exc, index)
        raise


class Trial:
    """A copy of the twin that a simulation runs on, plus the facts it assumes."""

    def __init__(self, twin: Twin, assume: Any = None) -> None:
        self.twin = twin
        self._assume = assume
        self.assumed: dict[str, Any] = {}

    @classmethod
    def of(cls, driver: Driver, twin: Twin) -> Trial:
        """A trial on a copy of ``twin`` that understands the driver's ``assume`` steps."""
        return cls(twin.clone(), driver.assume)

    def run(self, cmd: BaseModel) -> tuple[list[Any], list[dict[str, Any]]]:
        if isinstance(cmd, Assume):
            for instrument, facts in cmd.status.items():
                self.assumed.setdefault(instrument, {}).update(facts)
            if cmd.plate is not None:
                self.assumed.setdefault("_plates", {})[cmd.plate] = cmd.location
                if self._assume is not None:
                    self._assume(self.twin, cmd.plate, cmd.location)
            return [], []
        return self.twin.run(cmd)

    def snapshot(self, full: bool = False) -> dict[str, Any]:
        return self.twin.snapshot(full)


# Called before each step of a simulated protocol (a policy check): may raise.
StepCheck = Callable[[int, BaseModel, Trial], None]


def simulate_protocol(
    driver: Driver, twin: Twin, cmds: list[BaseModel], check: StepCheck | None = None
) -> tuple[Twin, list[tuple[int, list[dict[str, Any]]]]]:
    """Dry-run a protocol on a copy of ``twin``; raise the first failing step's error."""
    trial = Trial.of(driver, twin)
    per_step = []
    for i, cmd in enumerate(cmds):
        try:
            if check is not None:
                check(i, cmd, trial)
            _, events = trial.run(cmd)
        except DeviceError as exc:
            at_step(exc, i, command_name(cmd))
            raise
        per_step.append((i, events))
    return trial.twin, per_step


def expand_before(
    driver: Driver, cmd: BaseModel, progress: dict[str, Any]
) -> tuple[Twin, list[Any]] | None:
    """The operations an in-doubt action was expanded into, on the belief it started from."""
    if progress["twin_before"] is None:
        return None
    try:
        before = driver.twin_from_snapshot(progress["twin_before"])
        prims, _ = before.clone().run(cmd)
    except (DeviceError, ValueError, KeyError):
        return None
    return before, prims
