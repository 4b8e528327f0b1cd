"""``labwright run / approve / reject / resume / runs / show / events``: the task agent's CLI.

Exit codes: 0 done, 1 failed, 2 bad input, 3 waiting for a person, 4 refused (a question, a
refusal, a rejected plan or an aborted run).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from device_servers.lab import LabConfig
from labwright.cli._common import ConfigOpt, fail, lab_of, out
from labwright.cli._render import Progress, show_plan, show_question, show_report

EXIT = {"done": 0, "failed": 1, "waiting_approval": 3, "waiting_person": 3, "interrupted": 3}
REFUSED = {"refused", "clarification", "rejected", "aborted"}


def exit_code(status: str) -> int:
    return 4 if status in REFUSED else EXIT.get(status, 1)


def _runner(lab: LabConfig, model: str | None, console: Console) -> Any:
    from agents.task.planning import make_planner
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
            f"`labwright resume {outcome.run_id} --decision retry|skip|replan|abort`",
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
    from agents.mcp_client import LabServersStale

    try:
        outcome = asyncio.run(coro)
    except LabServersStale as exc:
        fail(str(exc))
    raise typer.Exit(exit_code(outcome.status))


def run(
    request: str = typer.Argument(..., help="What to do, in plain lab English."),
    config: Path | None = ConfigOpt,
    yes: bool = typer.Option(False, "--yes", help="Approve the plan (scripted use)."),
    detach: bool = typer.Option(False, "--detach", help="Leave the run waiting for approval."),
    model: str | None = typer.Option(None, help="provider:name of a chat model to plan with."),
    run_id: str | None = typer.Option(None, help="Choose the run id."),
) -> None:
    """Plan, simulate, ask for approval, then execute a request on the lab."""
    lab = lab_of(config)
    if not request.strip():
        fail("the request is empty")

    async def go() -> Any:
        async with _runner(lab, model, out) as runner:
            outcome = await runner.start(request, run_id)
            return await _settle(runner, outcome, out, yes, detach)

    _go(go())


def _answer(
    config: Path | None, run_id: str, answer: dict[str, Any] | None, model: str | None
) -> None:
    lab = lab_of(config)
    from state_store import TaskRuns, connect

    # Before any instrument server is started for it.
    if not lab.db_path.exists() or TaskRuns(connect(lab.db_path)).get(run_id) is None:
        fail(f"no task run {run_id!r} (see `labwright runs`)")

    async def go() -> Any:
        async with _runner(lab, model, out) as runner:
            if runner.runs.get(run_id) is None:
                fail(f"no task run {run_id!r} (see `labwright runs`)")
            current = await runner.outcome(run_id)
            decision = dict(answer) if answer is not None else None
            if decision is not None and not current.waiting:
                fail(f"run {run_id} is not waiting for a person (status {current.status})")
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
        fail(
            f"run {run_id} waits on {payload.get('kind')}: answer with `labwright resume "
            f"{run_id} --decision retry|skip|replan|abort`"
        )
    return {**decision, "decision": "approved", "granted": granted}


def approve(
    run_id: str = typer.Argument(...),
    config: Path | None = ConfigOpt,
    by: str = typer.Option(os.environ.get("USER", "operator"), help="Who approves."),
    model: str | None = typer.Option(None, help="provider:name (if the run plans with one)."),
) -> None:
    """Approve a run's plan (or an instrument's request for approval), then continue it."""
    _answer(config, run_id, {"decision": "approve", "by": by}, model)


def reject(
    run_id: str = typer.Argument(...),
    reason: str = typer.Option(..., "--reason", help="Why."),
    config: Path | None = ConfigOpt,
    by: str = typer.Option(os.environ.get("USER", "operator")),
) -> None:
    """Reject a run's plan; nothing is executed."""
    _answer(config, run_id, {"decision": "reject", "by": by, "reason": reason}, None)


def resume(
    run_id: str = typer.Argument(...),
    config: Path | None = ConfigOpt,
    decision: str | None = typer.Option(
        None,
        help="Answer to a question: retry (only what is left), skip, replan (the rest, from "
        "what the instruments report) or abort. Without: continue after a crash.",
    ),
    model: str | None = typer.Option(None),
) -> None:
    """Continue a run: after a crash, or with a person's answer to its question."""
    if decision is not None and decision not in ("retry", "skip", "replan", "abort"):
        fail("--decision is one of retry, skip, replan, abort")
    answer = (
        None
        if decision is None
        else {"decision": decision, "by": os.environ.get("USER", "operator")}
    )
    _answer(config, run_id, answer, model)


def runs(config: Path | None = ConfigOpt, limit: int = typer.Option(20)) -> None:
    """List task runs, newest first."""
    from state_store import TaskRuns, connect

    lab = lab_of(config)
    table = Table("run", "status", "created", "request")
    for r in TaskRuns(connect(lab.db_path)).list(limit=limit):
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.created_at))
        table.add_row(r.run_id, r.status, created, r.request[:70])
    out.print(table)


def show(run_id: str = typer.Argument(...), config: Path | None = ConfigOpt) -> None:
    """A run's request, plan, status and report."""
    from state_store import TaskRuns, connect

    lab = lab_of(config)
    run_ = TaskRuns(connect(lab.db_path)).get(run_id)
    if run_ is None:
        fail(f"no task run {run_id!r} (see `labwright runs`)")
    assert run_ is not None
    out.print(f"[bold]{run_.run_id}[/] {run_.status}: {run_.request}", highlight=False)
    if run_.plan:
        show_plan(out, {"plan": run_.plan, "simulation": {}})
    if run_.report:
        show_report(out, run_.report)


def events(
    run_id: str = typer.Argument(...),
    config: Path | None = ConfigOpt,
    follow: bool = typer.Option(False, "--follow", help="Keep printing until the run ends."),
) -> None:
    """A run's tool calls and decisions (from the audit log)."""
    from state_store import AuditLog, TaskRuns, connect

    lab = lab_of(config)
    conn = connect(lab.db_path)
    if TaskRuns(conn).get(run_id) is None:
        fail(f"no task run {run_id!r} (see `labwright runs`)")
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
