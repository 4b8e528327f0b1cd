"""``labwright run / approve / reject / resume / runs / show / events``: the task agent's CLI.

Exit codes: 0 done, 1 failed, 2 bad input, 3 waiting for a person, 4 refused (a question, a
refusal, a rejected plan or an aborted run).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from labwright.cli import ConfigOpt, _fail, _lab, app, out
from labwright.config import LabConfig

EXIT = {"done": 0, "failed": 1, "waiting_approval": 3, "waiting_person": 3, "interrupted": 3}
REFUSED = {"refused", "clarification", "rejected", "aborted"}


def exit_code(status: str) -> int:
    return 4 if status in REFUSED else EXIT.get(status, 1)


def make_planner(model: str | None) -> Any:
    """The LLM planner when a model is configured, else the embedded rule planner."""
    model = model or os.environ.get("LABWRIGHT_MODEL") or None
    if model:
        from agents.task.planning.llm import LLMPlanner

        return LLMPlanner(model)
    from agents.task.planning.rules import RulePlanner

    return RulePlanner()


def _runner(lab: LabConfig, model: str | None, console: Console) -> Any:
    from agents.task.runner import TaskRunner

    assert lab.source is not None
    return TaskRunner(
        list(lab.instruments),
        lab.source,
        lab.db_path,
        make_planner(model),
        env={"LABWRIGHT_STATE_DIR": str(lab.state_path)},
        model=model,
        progress=Progress(console),
    )


class Progress:
    """One line per dispatched step (and per notable decision)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, what: str, data: dict[str, Any]) -> None:
        if what == "dispatch":
            attempt = f" (attempt {data['attempt']})" if data.get("attempt", 1) > 1 else ""
            self.console.print(
                f"  [{data['index'] + 1:>3}/{data['total']}] {data['step']:<4} "
                f"{data['instrument']:<8} {data['command']}{attempt}",
                highlight=False,
            )
        elif what in ("retry", "in_doubt_resolved"):
            self.console.print(f"  [yellow]{what}[/] {data}", highlight=False)


# --------------------------------------------------------------------------- rendering
def show_plan(console: Console, payload: dict[str, Any]) -> None:
    plan = payload["plan"]
    sim = payload.get("simulation") or {}
    console.rule("plan")
    console.print(plan["summary"], highlight=False)
    table = Table("step", "instrument", "command", "arguments")
    for step in plan["steps"]:
        args = ", ".join(f"{k}={_short(v)}" for k, v in step["args"].items())
        table.add_row(step["id"], step["instrument"], step["command"], args)
    console.print(table)
    console.rule("simulation (twins only: nothing moved)")
    liquids = ", ".join(f"{k} {v:.1f} uL" for k, v in sim.get("dispensed_ul", {}).items())
    console.print(
        f"{sim.get('steps')} steps {sim.get('per_instrument')}; {sim.get('transfers')} "
        f"transfers, {sim.get('liquid_moves')} aspirate/dispense, {sim.get('tips_used')} tips, "
        f"{sim.get('plate_moves')} plate moves; dispensed: {liquids or '-'}; estimated "
        f"{sim.get('duration_s', 0) / 60:.1f} min",
        highlight=False,
    )
    for warning in sim.get("warnings", []):
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    for item in payload.get("needs_extra_approval", []):
        console.print(
            f"[yellow]needs your approval again at the instrument:[/] {item['step']} "
            f"{item['instrument']} {item['command']}: {item['reason']}",
            highlight=False,
        )


def _short(value: Any) -> str:
    """Long well lists as first..last (n)."""
    if isinstance(value, list) and len(value) > 3:
        return f"{value[0]}..{value[-1]} ({len(value)})"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def show_question(console: Console, payload: dict[str, Any]) -> None:
    obs = payload.get("observation") or {}
    error = obs.get("error") or {}
    console.rule(f"[yellow]a person is needed[/] ({payload.get('kind')})")
    console.print(f"step {payload.get('step')}: {payload.get('reason')}", highlight=False)
    if error:
        console.print(
            f"{error.get('code')}: {error.get('detail')}\nfix: {error.get('fix_hint')}",
            highlight=False,
        )
    if obs.get("transport_error"):
        console.print(f"transport: {obs['transport_error']}", highlight=False)


def show_report(console: Console, report: dict[str, Any]) -> None:
    console.rule(f"report: {report['status']}")
    answer = report.get("answer")
    if answer:
        key = "question" if answer.get("kind") == "clarification" else "reason"
        console.print(f"{answer.get('kind')}: {answer.get(key)}", highlight=False)
        if answer.get("options"):
            console.print(f"options: {', '.join(answer['options'])}", highlight=False)
        return
    console.print(
        f"{report.get('steps_done')}/{report.get('steps_total')} steps done "
        f"(simulated={report.get('simulated')}); deviations: {len(report.get('deviations', []))}",
        highlight=False,
    )
    for reading in report.get("readings", []):
        console.print(reading_grid(reading))


def reading_grid(reading: dict[str, Any]) -> Table:
    values: dict[str, float] = reading.get("values", {})
    rows = sorted({w[0] for w in values}, key=str)
    cols = sorted({int(w[1:]) for w in values})
    what = reading.get("wavelength_nm") or (
        f"{reading.get('excitation_nm')}/{reading.get('emission_nm')}"
    )
    table = Table(
        title=f"{reading.get('mode')} of {reading.get('plate')} at {what} nm "
        f"({reading.get('unit', '')}, simulated={reading.get('simulated')})"
    )
    table.add_column("")
    for c in cols:
        table.add_column(str(c), justify="right")
    for r in rows:
        table.add_row(r, *(f"{values[f'{r}{c}']:.3f}" if f"{r}{c}" in values else "" for c in cols))
    return table


# --------------------------------------------------------------------------- driving
async def _settle(runner: Any, outcome: Any, console: Console, yes: bool, detach: bool) -> Any:
    """Show where a run stands; answer an approval in the terminal when asked to."""
    while outcome.waiting:
        payload = outcome.interrupt
        if payload.get("kind") == "approval":
            show_plan(console, payload)
            if detach:
                break
            answer = {"decision": "approve", "by": "--yes"} if yes else ask_approval()
            if answer is None:
                break
            outcome = await runner.resume(outcome.run_id, answer)
            continue
        show_question(console, payload)
        break
    if outcome.waiting:
        console.print(
            f"run [bold]{outcome.run_id}[/] is waiting for a person: `labwright approve "
            f"{outcome.run_id}`, `labwright reject {outcome.run_id} --reason ...` or "
            f"`labwright resume {outcome.run_id} --decision retry|skip|abort`",
            highlight=False,
        )
    elif outcome.report is not None:
        show_report(console, outcome.report)
    return outcome


def ask_approval() -> dict[str, Any] | None:
    """Approve / reject / edit at the terminal; None when no one can answer (no TTY)."""
    if not sys.stdin.isatty():
        return None
    choice = typer.prompt("approve this plan? [y]es / [n]o / [e]dit the request", default="n")
    who = os.environ.get("USER", "operator")
    if choice.lower().startswith("y"):
        return {"decision": "approve", "by": who}
    if choice.lower().startswith("e"):
        return {"decision": "edit", "by": who, "text": typer.prompt("new request")}
    return {"decision": "reject", "by": who, "reason": typer.prompt("reason", default="")}


def _go(coro: Any) -> None:
    outcome = asyncio.run(coro)
    raise typer.Exit(exit_code(outcome.status))


@app.command()
def run(
    request: str = typer.Argument(..., help="What to do, in plain lab English."),
    config: Path | None = ConfigOpt,
    yes: bool = typer.Option(False, "--yes", help="Approve the plan (scripted use)."),
    detach: bool = typer.Option(False, "--detach", help="Leave the run waiting for approval."),
    model: str | None = typer.Option(None, help="provider:name of a chat model to plan with."),
    run_id: str | None = typer.Option(None, help="Choose the run id."),
) -> None:
    """Plan, simulate, ask for approval, then execute a request on the lab."""
    lab = _lab(config)
    if not request.strip():
        _fail("the request is empty")

    async def go() -> Any:
        async with _runner(lab, model, out) as runner:
            outcome = await runner.start(request, run_id)
            return await _settle(runner, outcome, out, yes, detach)

    _go(go())


def _answer(
    config: Path | None, run_id: str, answer: dict[str, Any] | None, model: str | None
) -> None:
    lab = _lab(config)
    from state_store import TaskRuns, connect

    # Before any instrument server is started for it.
    if not lab.db_path.exists() or TaskRuns(connect(lab.db_path)).get(run_id) is None:
        _fail(f"no task run {run_id!r} (see `labwright runs`)")

    async def go() -> Any:
        async with _runner(lab, model, out) as runner:
            if runner.runs.get(run_id) is None:
                _fail(f"no task run {run_id!r} (see `labwright runs`)")
            current = await runner.outcome(run_id)
            decision = dict(answer) if answer is not None else None
            if decision is not None and not current.waiting:
                _fail(f"run {run_id} is not waiting for a person (status {current.status})")
            if (
                decision
                and decision.get("decision") == "approve"
                and current.interrupt.get("kind") != "approval"
            ):
                decision = grant_instrument_approvals(runner, run_id, current.interrupt, decision)
            outcome = await runner.resume(run_id, decision)
            return await _settle(runner, outcome, out, yes=False, detach=True)

    _go(go())


def grant_instrument_approvals(
    runner: Any, run_id: str, payload: dict[str, Any], decision: dict[str, Any]
) -> dict[str, Any]:
    """A person approves what an instrument asked approval for (its recorded request)."""
    from state_store import Approvals

    obs = payload.get("observation") or {}
    approvals = Approvals(runner.conn)
    granted = []
    for req in approvals.pending(obs.get("instrument")):
        if req["action_id"] == obs.get("action_id"):
            approvals.grant(req["instrument"], req["action_id"], decision.get("by", "operator"))
            granted.append(req["action_id"])
    if not granted:
        _fail(
            f"run {run_id} waits on {payload.get('kind')}: answer with `labwright resume "
            f"{run_id} --decision retry|skip|abort`"
        )
    return {**decision, "decision": "approved", "granted": granted}


@app.command()
def approve(
    run_id: str = typer.Argument(...),
    config: Path | None = ConfigOpt,
    by: str = typer.Option(os.environ.get("USER", "operator"), help="Who approves."),
    model: str | None = typer.Option(None, help="provider:name (if the run plans with one)."),
) -> None:
    """Approve a run's plan (or an instrument's request for approval), then continue it."""
    _answer(config, run_id, {"decision": "approve", "by": by}, model)


@app.command()
def reject(
    run_id: str = typer.Argument(...),
    reason: str = typer.Option(..., "--reason", help="Why."),
    config: Path | None = ConfigOpt,
    by: str = typer.Option(os.environ.get("USER", "operator")),
) -> None:
    """Reject a run's plan; nothing is executed."""
    _answer(config, run_id, {"decision": "reject", "by": by, "reason": reason}, None)


@app.command()
def resume(
    run_id: str = typer.Argument(...),
    config: Path | None = ConfigOpt,
    decision: str | None = typer.Option(
        None, help="Answer to a question: retry, skip or abort. Without: continue after a crash."
    ),
    model: str | None = typer.Option(None),
) -> None:
    """Continue a run: after a crash, or with a person's answer to its question."""
    if decision is not None and decision not in ("retry", "skip", "abort"):
        _fail("--decision is one of retry, skip, abort")
    answer = (
        None
        if decision is None
        else {"decision": decision, "by": os.environ.get("USER", "operator")}
    )
    _answer(config, run_id, answer, model)


@app.command()
def runs(config: Path | None = ConfigOpt, limit: int = typer.Option(20)) -> None:
    """List task runs, newest first."""
    from state_store import TaskRuns, connect

    lab = _lab(config)
    table = Table("run", "status", "created", "request")
    for r in TaskRuns(connect(lab.db_path)).list(limit=limit):
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.created_at))
        table.add_row(r.run_id, r.status, created, r.request[:70])
    out.print(table)


@app.command()
def show(run_id: str = typer.Argument(...), config: Path | None = ConfigOpt) -> None:
    """A run's request, plan, status and report."""
    from state_store import TaskRuns, connect

    lab = _lab(config)
    run_ = TaskRuns(connect(lab.db_path)).get(run_id)
    if run_ is None:
        _fail(f"no task run {run_id!r} (see `labwright runs`)")
    assert run_ is not None
    out.print(f"[bold]{run_.run_id}[/] {run_.status}: {run_.request}", highlight=False)
    if run_.plan:
        show_plan(out, {"plan": run_.plan, "simulation": {}})
    if run_.report:
        show_report(out, run_.report)


@app.command()
def events(
    run_id: str = typer.Argument(...),
    config: Path | None = ConfigOpt,
    follow: bool = typer.Option(False, "--follow", help="Keep printing until the run ends."),
) -> None:
    """A run's tool calls and decisions (from the audit log)."""
    from state_store import AuditLog, TaskRuns, connect

    lab = _lab(config)
    conn = connect(lab.db_path)
    if TaskRuns(conn).get(run_id) is None:
        _fail(f"no task run {run_id!r} (see `labwright runs`)")
    log, seen = AuditLog(conn), 0
    while True:
        for entry in log.entries(run_id):
            if entry.seq <= seen:
                continue
            seen = entry.seq
            stamp = time.strftime("%H:%M:%S", time.localtime(entry.ts))
            out.print(
                f"{stamp} #{entry.seq} {entry.agent} {entry.tool} -> {entry.outcome} "
                f"{entry.decision_note}",
                highlight=False,
            )
        status = TaskRuns(conn).get(run_id)
        if not follow or status is None or status.status not in ("running", "planning"):
            break
        time.sleep(0.5)


def dump(obj: Any) -> str:  # pragma: no cover - debugging aid
    return json.dumps(obj, indent=2, default=str)
