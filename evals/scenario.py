"""The scenario format: one YAML file per scenario, validated by pydantic.

A scenario names a request, the lab (``examples/lab.yaml`` plus a deep-merged ``lab_patch``),
faults to arm per instrument (from the start, or when a plan step is first dispatched), the
person's scripted answers, optional disturbances (e-stops during steps, which a person may
reset; crashes of the whole process, one or several in a row; a kill of one instrument's
server, which may be restarted), and what must be true afterwards: the outcome, the simulated
world (wells, plates, readings, tips on channels, mixing cycles, instrument status such as
temperatures, locks and drawers, or "equals the uncrashed run's") and safety assertions.
The format only grows: every older file keeps its meaning. Errors name the file and field.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from device_servers.contract import FaultSpec
from policies.safe_yaml import YamlError, read_yaml

CATEGORIES = ("normal", "boundary", "fault_recovery", "ambiguous", "prompt_injection")
Category = Literal["normal", "boundary", "fault_recovery", "ambiguous", "prompt_injection"]
Outcome = Literal["done", "clarification", "escalated", "refused", "stopped"]
ANSWERS = ("approve", "reject", "retry", "skip", "abort", "replan")
BASE_LAB = Path(__file__).resolve().parent.parent / "examples" / "lab.yaml"


class ScenarioError(Exception):
    """A scenario file that cannot be used; the message names the file and field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EditAnswer(_Strict):
    """The person edits the request at the approval step."""

    edit: str = Field(min_length=1)


Answer = Literal["approve", "reject", "retry", "skip", "abort", "replan"] | EditAnswer


class WellCheck(_Strict):
    """Wells that must really hold ``volume_ul`` (within ``tolerance_ul``) at the end."""

    labware: str
    wells: list[str] = Field(min_length=1)
    volume_ul: float = Field(ge=0)
    tolerance_ul: float = Field(default=0.5, ge=0)

    @field_validator("wells", mode="before")
    @classmethod
    def _expand(cls, value: Any) -> Any:
        if isinstance(value, str):
            return expand_wells(value)
        return value


class ReadingCheck(_Strict):
    """A reading of ``plate`` whose ``wells`` follow ``pattern``.

    ``halving``: each well about half the previous one above the blank (ratio in
    [``min_ratio``, ``max_ratio``]); ``finite``: every value is a number; ``any``: a reading
    exists.
    """

    plate: str
    mode: str | None = None
    wells: list[str] = Field(default_factory=list)
    pattern: Literal["halving", "finite", "any"] = "any"
    blank: float = 0.045
    min_ratio: float = 0.35
    max_ratio: float = 0.65

    @field_validator("wells", mode="before")
    @classmethod
    def _expand(cls, value: Any) -> Any:
        if isinstance(value, str):
            return expand_wells(value)
        return value


class MixCheck(_Strict):
    """Wells that must have been mixed exactly ``cycles`` times (an aspiration from the well
    followed by a dispense back into it on the same channel, as the world logged them)."""

    labware: str
    wells: list[str] = Field(min_length=1)
    cycles: int = Field(ge=0)

    @field_validator("wells", mode="before")
    @classmethod
    def _expand(cls, value: Any) -> Any:
        if isinstance(value, str):
            return expand_wells(value)
        return value


class Expect(_Strict):
    """What must be true after the run (judged from the world, ledgers and audit)."""

    outcome: Outcome | list[Outcome]
    asked: list[str] = Field(
        default_factory=list, description="words the clarification must mention (what is missing)"
    )
    wells: list[WellCheck] = Field(default_factory=list)
    plates: dict[str, str] = Field(default_factory=dict)
    readings: list[ReadingCheck] = Field(default_factory=list)
    steps_done_min: int | None = Field(default=None, ge=0)
    escalations_min: int = Field(default=0, ge=0)
    max_unsafe: int = Field(default=0, ge=0, description="unsafe events allowed (always 0)")
    physical_actions: Literal["any", "none"] = Field(
        default="any", description="none: not a single physical operation may happen"
    )
    unchanged_wells: list[str] = Field(
        default_factory=list, description="labware:well whose volume must not change"
    )
    steps_done_max: int | None = Field(
        default=None, ge=0, description="at most this many steps reported done"
    )
    tips_on_channels: dict[str, int] = Field(
        default_factory=dict, description="instrument -> channels that may still carry a tip"
    )
    mix_cycles: list[MixCheck] = Field(default_factory=list)
    status: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="instrument -> physical status the world must hold at the end (a "
        "temperature within 0.5, locked, drawer_open ...)",
    )
    world_equals_uncrashed: bool = Field(
        default=False,
        description="wells, tips, channels and plates equal a run of the same scenario "
        "without its crashes and server kills",
    )
    escalation_mentions: list[str] = Field(
        default_factory=list, description="words the person's questions must mention"
    )
    escalation_lacks: list[str] = Field(
        default_factory=list, description="words no question to the person may contain"
    )

    @property
    def outcomes(self) -> list[str]:
        return [self.outcome] if isinstance(self.outcome, str) else list(self.outcome)


class EStop(_Strict):
    """A person presses the e-stop of ``instrument`` ``after_s`` after step ``during_step`` is
    dispatched for the ``dispatch``-th time (a later one: during its recovery). With
    ``reset``, a person resets it (approving reset_estop) before answering the next question."""

    instrument: str
    during_step: str
    after_s: float = Field(default=0.3, ge=0)
    dispatch: int = Field(default=1, ge=1)
    reset: bool = False


class Crash(_Strict):
    """The whole agent process (and its servers) is killed when step ``at_step`` is
    dispatched, or when a line containing ``printed`` is printed (``completing the rest``:
    while recovering an in-doubt action); the run is then resumed with ``labwright resume``
    (both via the CLI). Several kills hit successive processes, in order."""

    at_step: int | None = Field(default=None, ge=1)
    printed: str | None = Field(default=None, min_length=1)
    delay_s: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _one_trigger(self) -> Crash:
        if (self.at_step is None) == (self.printed is None):
            raise ValueError("give exactly one of at_step and printed")
        return self

    @property
    def marker(self) -> str:
        return f"[{self.at_step:>3}/" if self.at_step is not None else str(self.printed)


class ScenarioFault(FaultSpec):
    """A fault of the simulated world; with ``step``, armed only when that plan step is first
    dispatched (and ``at_op`` then counts the instrument's operations from there)."""

    step: str | None = None


class ServerKill(_Strict):
    """The server of ``instrument`` is killed -9 at an operation of step ``step`` (``match``:
    e.g. ``{op: dispense, well: A2}``; ``after_effect``: that operation happened first). With
    ``restart``, the server is started again before the person answers the next question
    (one server restarted, the task process kept)."""

    instrument: str
    step: str
    match: dict[str, str] = Field(default_factory=dict)
    after_effect: bool = True
    restart: bool = True


class Scenario(_Strict):
    """One evaluation scenario."""

    name: str = Field(pattern=r"^[a-z0-9_\-]{1,80}$")
    category: Category
    description: str = ""
    request: str = Field(min_length=1)
    answers: list[Answer] = Field(default_factory=list)
    instruments: list[str] | None = Field(
        default=None,
        description="only these instruments of the lab (fewer servers start: faster)",
    )
    lab_patch: dict[str, Any] = Field(default_factory=dict)
    faults: dict[str, list[ScenarioFault]] = Field(default_factory=dict)
    estop: EStop | None = None
    estops: list[EStop] = Field(default_factory=list)
    crash: Crash | None = None
    crashes: list[Crash] = Field(default_factory=list, description="kills in a row")
    server_kills: list[ServerKill] = Field(default_factory=list)
    timeout_s: float = Field(default=120.0, gt=0)
    expect: Expect

    source: Path | None = Field(default=None, exclude=True)

    @property
    def all_estops(self) -> list[EStop]:
        return ([self.estop] if self.estop else []) + list(self.estops)

    @property
    def all_crashes(self) -> list[Crash]:
        return ([self.crash] if self.crash else []) + list(self.crashes)

    def step_faults(self) -> dict[str, list[tuple[str, dict[str, Any]]]]:
        """Plan step -> (instrument, fault spec) armed when the step is first dispatched."""
        out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        for inst, specs in self.faults.items():
            for spec in specs:
                if spec.step is not None:
                    body = spec.model_dump(exclude_defaults=True, exclude={"step"})
                    out.setdefault(spec.step, []).append((inst, body))
        for kill in self.server_kills:
            body = {"kind": "crash", "match": dict(kill.match)}
            body["params"] = {"after_effect": kill.after_effect}
            out.setdefault(kill.step, []).append((kill.instrument, body))
        return out

    def uncrashed(self) -> Scenario:
        """The same scenario without its crashes and server kills (the reference run)."""
        ref = self.model_copy(update={"crash": None, "crashes": [], "server_kills": []})
        ref.source = self.source
        return ref

    def lab(self, base: Path = BASE_LAB) -> dict[str, Any]:
        """The scenario's lab file as data: the base lab, patched, faults armed."""
        data = read_yaml(base)
        data = deep_merge(data, self.lab_patch)
        if self.instruments is not None:
            ids = {i["id"] for i in data["instruments"]}
            unknown = sorted(set(self.instruments) - ids)
            if unknown:
                raise ScenarioError(f"{self.source}: instruments: no instrument {unknown}")
            data["instruments"] = [i for i in data["instruments"] if i["id"] in self.instruments]
            owners = {*self.instruments, "hotel"}
            for inst in data["instruments"]:
                if "locations" in inst:  # a plate mover reaches only instruments still there
                    inst["locations"] = [
                        loc for loc in inst["locations"] if loc.split(":", 1)[0] in owners
                    ]
        known = {i["id"]: i for i in data["instruments"]}
        named = [(f"faults.{inst}", inst) for inst in self.faults]
        named += [(f"server_kills.{i}", k.instrument) for i, k in enumerate(self.server_kills)]
        named += [(f"estops.{i}", e.instrument) for i, e in enumerate(self.all_estops)]
        for where, inst in named:
            if inst not in known:
                raise ScenarioError(
                    f"{self.source}: {where}: no instrument {inst!r} (known: {', '.join(known)})"
                )
        for inst, specs in self.faults.items():
            known[inst].setdefault("faults", [])
            known[inst]["faults"].extend(
                s.model_dump(exclude_defaults=True, exclude={"step"})
                for s in specs
                if s.step is None
            )
        return data


def deep_merge(base: Any, patch: Any) -> Any:
    """``patch`` merged into ``base``: mappings recursively, lists of ``{id: ...}`` items by
    id (new ids are appended, ``{id: X, remove: true}`` deletes X), every other value
    replaced."""
    if isinstance(base, dict) and isinstance(patch, dict):
        out = copy.deepcopy(base)
        for key, value in patch.items():
            out[key] = deep_merge(out[key], value) if key in out else copy.deepcopy(value)
        return out
    if (
        isinstance(base, list)
        and isinstance(patch, list)
        and all(isinstance(x, dict) and "id" in x for x in [*base, *patch])
    ):
        merged = {x["id"]: copy.deepcopy(x) for x in base}
        for item in patch:
            if item.get("remove") is True:
                merged.pop(item["id"], None)
                continue
            merged[item["id"]] = deep_merge(merged.get(item["id"], {}), item)
        return list(merged.values())
    return copy.deepcopy(patch)


_RANGE = re.compile(r"^([A-P])(\d{1,2})\s*(?::|\.\.|-)\s*([A-P])(\d{1,2})$")


def expand_wells(text: str) -> list[str]:
    """``A1:A12`` (a rectangle), ``A1,B2`` or ``A1`` as a list of well names."""
    out: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        m = _RANGE.match(part)
        if m is None:
            out.append(part)
            continue
        r0, c0, r1, c1 = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))
        for r in range(ord(r0), ord(r1) + 1):
            out.extend(f"{chr(r)}{c}" for c in range(c0, c1 + 1))
    return out


def load_scenario(path: Path) -> Scenario:
    """Read and validate one scenario file."""
    try:
        data = read_yaml(path)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except YamlError as exc:
        raise ScenarioError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ScenarioError(f"{path}: a scenario is a mapping (name, category, request, expect)")
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        lines = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err["loc"]) or "(top)"
            lines.append(f"{path}: {where}: {err['msg']}")
        raise ScenarioError("\n".join(lines)) from exc
    scenario.source = path
    return scenario


def load_scenarios(path: Path, category: str | None = None) -> list[Scenario]:
    """Every scenario under ``path`` (a file or a directory, recursively), sorted by name."""
    if category is not None and category not in CATEGORIES:
        raise ScenarioError(f"unknown category {category!r} (one of {', '.join(CATEGORIES)})")
    files = [path] if path.is_file() else sorted(path.rglob("*.yaml"))
    if not files:
        raise ScenarioError(f"{path}: no scenario files (*.yaml)")
    scenarios = [load_scenario(f) for f in files]
    seen: dict[str, Path | None] = {}
    for s in scenarios:
        if s.name in seen:
            raise ScenarioError(f"{s.source}: name: {s.name!r} is also used by {seen[s.name]}")
        seen[s.name] = s.source
    return [s for s in scenarios if category is None or s.category == category]
