"""Simulate a whole plan across instruments, on their twins, before anything moves.

Each instrument simulates its own steps as one dry-run protocol (``start_run(dry_run=true)``),
so its steps see each other's effects. What other instruments do in between reaches it as
``assume`` steps: a plate the arm puts into the reader's drawer, the drawer the reader opened
before the arm moves in. The result is a summary a person can approve: steps, transfers,
volumes per liquid, tips, a duration estimate, warnings and actions needing extra approval.
"""

from __future__ import annotations

from typing import Any

import anyio
from pydantic import BaseModel, Field

from agents.device.agent import DeviceAgent
from agents.task.planning.models import Plan, PlanStep
from agents.task.timeline import WINDOW, Timeline, Use, moves, timeline
from device_servers.contract import Code, ErrorInfo, Station, after_command, location_owner
from policies import PolicyEngine, PolicyRequest, Verdict

# Rough seconds per command, for a step whose instrument estimated none (an older server).
_SECONDS = {
    "pick_up_tips": 4.0,
    "drop_tips": 4.0,
    "aspirate": 5.0,
    "dispense": 5.0,
    "mix": 10.0,
    "move_plate": 12.0,
    "open_drawer": 3.0,
    "close_drawer": 3.0,
    "read_absorbance": 20.0,
    "read_fluorescence": 30.0,
    "read_luminescence": 40.0,
    "lock_plate": 2.0,
    "unlock_plate": 2.0,
    "set_temperature": 1.0,
    "stop": 1.0,
    "home": 10.0,
}


class StepPrediction(BaseModel):
    step_id: str
    instrument: str
    command: str
    events: list[dict[str, Any]] = Field(default_factory=list)
    # The twin's footprint of the step: labware it uses, estimated instrument seconds.
    labware: list[str] = Field(default_factory=list)
    seconds: float | None = None


class SimulationReport(BaseModel):
    """What the dry run of the whole plan predicts."""

    ok: bool
    simulated: bool = True
    error: dict[str, Any] | None = None
    failed_step: str | None = None
    steps: int = 0
    per_instrument: dict[str, int] = Field(default_factory=dict)
    transfers: int = 0
    liquid_moves: int = 0
    dispensed_ul: dict[str, float] = Field(default_factory=dict)
    tips_used: int = 0
    plate_moves: int = 0
    duration_s: float = 0.0  # every step one after another
    warnings: list[str] = Field(default_factory=list)
    needs_approval: list[dict[str, Any]] = Field(default_factory=list)
    # Per step: the verdict of its instrument's rules and the rule that decided it.
    verdicts: list[dict[str, Any]] = Field(default_factory=list)
    # Dependencies, per-instrument start/end, critical path, makespan (see agents.task.timeline).
    timeline: Timeline | None = None
    predictions: list[StepPrediction] = Field(default_factory=list)


def _stations(state: dict[str, Any]) -> list[Station]:
    return [Station.model_validate(s) for s in state.get("stations") or []]


def _facts(lab_states: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The facts the instruments' stations need (how a plate reaches them), as they are now;
    nothing runs yet when the plan starts."""
    facts: dict[str, dict[str, Any]] = {}
    for inst, state in lab_states.items():
        seen = state.get("facts") or {}
        needed = {r.fact for st in _stations(state) for r in st.requires}
        facts[inst] = {f: seen.get(f) for f in needed} | {"busy": False}
    return facts


def _after(step: PlanStep, facts: dict[str, dict[str, Any]], lab_states: dict[str, Any]) -> None:
    """How a step changes the facts other instruments see (its stations say which)."""
    state = lab_states.get(step.instrument) or {}
    after_command(_stations(state), step.command, facts.setdefault(step.instrument, {}))


def split_by_instrument(
    plan: Plan, lab_states: dict[str, dict[str, Any]]
) -> dict[str, list[tuple[str | None, dict[str, Any]]]]:
    """Per instrument: its protocol steps, each tagged with the plan step id (None: assume)."""
    protocols: dict[str, list[tuple[str | None, dict[str, Any]]]] = {i: [] for i in lab_states}
    facts = _facts(lab_states)
    for step in plan.steps:
        if step.instrument not in protocols:
            continue
        if step.command == "move_plate":
            others = {k: dict(v) for k, v in facts.items() if k != step.instrument}
            protocols[step.instrument].append(
                (None, {"command": "assume", "args": {"status": others}})
            )
        protocols[step.instrument].append(
            (step.id, {"command": step.command, "args": dict(step.args)})
        )
        _after(step, facts, lab_states)
        if step.command == "move_plate":
            plate, where = step.args.get("plate"), step.args.get("to_location")
            for other, steps in protocols.items():
                if other != step.instrument:
                    steps.append(
                        (None, {"command": "assume", "args": {"plate": plate, "location": where}})
                    )
    for steps in protocols.values():  # what no later step of that instrument sees is not sent
        while steps and steps[-1][0] is None:
            steps.pop()
    return protocols


async def _dry_run(
    agent: DeviceAgent, steps: list[tuple[str | None, dict[str, Any]]], timeout_s: float
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run one instrument's dry-run protocol to its end; (run info, events)."""
    started = await agent.call(
        "start_run", protocol={"name": "plan-simulation", "steps": [s for _, s in steps]}
    )
    if not started.get("ok"):
        return {"status": "failed", "error": started.get("error")}, []
    run_id = started["run_id"]
    events: list[dict[str, Any]] = []
    seq = 0
    with anyio.fail_after(timeout_s):
        while True:
            page = await agent.call("run_events", run_id=run_id, since_seq=seq, max=1000)
            events.extend(page["events"])
            seq = page["next_seq"]
            if page["status"] not in ("pending", "running") and not page["events"]:
                break
            if not page["events"]:
                await anyio.sleep(0.01)
    info = await agent.call("get_run", run_id=run_id)
    return info, events


def _estimate(step: PlanStep, state: dict[str, Any]) -> float:
    if step.command == "transfer":
        per = 4 + 5 + 5 + 4 + 10 * int(step.args.get("mix_after") or 0)
        return per * len(step.args.get("destination_wells") or [1])
    if step.command in ("shake", "hold"):
        return float(step.args.get("duration_s") or 0)
    if step.command == "wait_for_temperature":
        limits = state.get("limits") or {}
        ramp = float(limits.get("ramp_c_per_min") or 10.0)
        target = state.get("target_c") or state.get("current_c") or 22.0
        return 60.0 * abs(float(target) - float(state.get("current_c") or 22.0)) / ramp
    return _SECONDS.get(step.command, 5.0)


async def simulate_plan(
    plan: Plan,
    agents: dict[str, DeviceAgent],
    lab_states: dict[str, dict[str, Any]],
    policies: dict[str, PolicyEngine] | None = None,
    timeout_s: float = 120.0,
    sequential: bool = False,
    window: int = WINDOW,
) -> SimulationReport:
    """Dry-run every instrument's part of the plan and summarise the prediction."""
    report = SimulationReport(ok=True, steps=len(plan.steps))
    unknown = [s.id for s in plan.steps if s.instrument not in agents]
    if unknown:
        report.ok = False
        report.failed_step = unknown[0]
        report.error = ErrorInfo(
            code=Code.INVALID_ARGUMENT, detail=f"no instrument for {unknown}"
        ).payload()
        return report
    protocols = split_by_instrument(plan, {i: lab_states.get(i, {}) for i in agents})
    by_step: dict[str, StepPrediction] = {
        s.id: StepPrediction(step_id=s.id, instrument=s.instrument, command=s.command)
        for s in plan.steps
    }
    for inst, steps in protocols.items():
        if not any(step_id for step_id, _ in steps):
            continue
        info, events = await _dry_run(agents[inst], steps, timeout_s)
        index: dict[int, str | None] = {i: step_id for i, (step_id, _) in enumerate(steps)}
        current: str | None = None
        for ev in events:
            if ev["type"] == "step_started":
                current = index.get(int(ev["data"].get("step", -1)))
            elif current is not None and ev["type"] == "step_completed":
                footprint = by_step[current]
                footprint.labware = list(ev["data"].get("labware") or [])
                footprint.seconds = ev["data"].get("seconds")
            elif current is not None:
                by_step[current].events.append({"type": ev["type"], "data": ev["data"]})
        if info.get("status") != "completed" and report.ok:
            report.ok = False
            error = dict(info.get("error") or {})
            step_index = (error.get("extra") or {}).get("step")
            report.failed_step = index.get(int(step_index)) if step_index is not None else None
            report.error = error
    report.predictions = [by_step[s.id] for s in plan.steps]
    seconds = _summarise(report, plan, lab_states, policies or {})
    if report.ok:
        uses = uses_of(plan, report.predictions, seconds, set(agents))
        report.timeline = timeline(uses, sequential=sequential, window=window)
    return report


def headline(report: dict[str, Any]) -> dict[str, Any]:
    """A simulation report's figures without its per-step parts (predictions, the timeline's
    steps): what a run's report keeps."""
    out = {k: v for k, v in report.items() if k not in ("predictions", "timeline")}
    line = report.get("timeline")
    if line:
        out["timeline"] = {k: v for k, v in line.items() if k not in ("steps", "critical_path")}
    return out


def uses_of(
    plan: Plan, predictions: list[StepPrediction], seconds: list[float], instruments: set[str]
) -> list[Use]:
    """What each step uses, as the simulation predicts it (see :mod:`agents.task.timeline`)."""
    out = []
    for step, pred, secs in zip(plan.steps, predictions, seconds, strict=True):
        moved = moves(pred.events)
        places = sorted({p for _, a, b in moved for p in (a, b) if p})
        reaches = {location_owner(p) for p in places} & instruments - {step.instrument}
        labware = set(pred.labware) | {plate for plate, _, _ in moved}
        out.append(
            Use(
                step.id,
                step.instrument,
                secs,
                tuple(sorted(labware)),
                tuple(places),
                tuple(sorted(reaches)),
            )
        )
    return out


def _summarise(
    report: SimulationReport,
    plan: Plan,
    lab_states: dict[str, dict[str, Any]],
    policies: dict[str, PolicyEngine],
) -> list[float]:
    """Fill the report's summary; the estimated seconds of every step."""
    dispensed: dict[str, float] = {}
    seconds: list[float] = []
    for step, pred in zip(plan.steps, report.predictions, strict=True):
        report.per_instrument[step.instrument] = report.per_instrument.get(step.instrument, 0) + 1
        # An instrument that says how long an operation takes (a shake, a thermal cycle) is
        # believed; the table guesses the rest.
        timed = sum(
            float(ev["data"]["duration_s"])
            for ev in pred.events
            if isinstance(ev.get("data"), dict) and "duration_s" in ev["data"]
        )
        if pred.seconds is not None:  # the twin's own estimate
            seconds.append(float(pred.seconds))
        else:
            seconds.append(timed or _estimate(step, lab_states.get(step.instrument, {})))
        report.duration_s += seconds[-1]
        if step.command == "transfer":
            report.transfers += len(step.args.get("destination_wells") or [])
        if step.command == "move_plate":
            report.plate_moves += 1
        for ev in pred.events:
            data = ev["data"]
            if ev["type"] == "tip_picked_up":
                report.tips_used += 1
            elif ev["type"] == "liquid_transferred":
                report.liquid_moves += 1
                if data.get("op") == "dispense":
                    for liquid, vol in (data.get("liquids") or {}).items():
                        dispensed[liquid] = dispensed.get(liquid, 0.0) + float(vol)
            elif ev["type"] == "warning" and data.get("what") == "needs_approval":
                # The instrument's own rules said so in its dry run (derived figures included).
                report.needs_approval.append(
                    {
                        "step": step.id,
                        "instrument": step.instrument,
                        "command": step.command,
                        "reason": str(data.get("message", "")).partition(": ")[2],
                    }
                )
            elif ev["type"] == "warning":
                report.warnings.append(f"{step.id}: {data.get('message', data)}")
        engine = policies.get(step.instrument)
        if engine is not None:
            decision = engine.evaluate(
                PolicyRequest.for_args(step.instrument, step.command, step.args, facts_known=False)
            )
            report.verdicts.append(
                {
                    "step": step.id,
                    "verdict": decision.verdict.value,
                    "rule": decision.rule_id,
                    "reason": decision.reason,
                    "rules_checked": len(engine.rules),
                }
            )
            flagged = any(a["step"] == step.id for a in report.needs_approval)
            if decision.verdict is Verdict.REQUIRE_APPROVAL and not flagged:
                report.needs_approval.append(
                    {
                        "step": step.id,
                        "instrument": step.instrument,
                        "command": step.command,
                        "reason": decision.reason,
                    }
                )
    report.dispensed_ul = {k: round(v, 3) for k, v in sorted(dispensed.items())}
    report.duration_s = round(report.duration_s, 1)
    return seconds
