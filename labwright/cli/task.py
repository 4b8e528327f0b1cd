"""``labwright run / approve / reject / resume / runs / show / events``: the task agent's CLI.

Exit codes: 0 done, 1 failed, 2 bad input, 3 waiting for a person, 4 refused (a question, a
refusal, a rejected plan or an aborted run).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.table import Table

from device_servers.lab import LabConfig
from labwright.cli._common import ConfigOpt, fail, lab_of, out
from labwright.cli._render import Progress, show_plan, show_question, show_report
from labwright.operations import DECISIONS, OperationError
from labwright.records import has_records, task_db
from state_store.people import PeopleError

EXIT = {"done": 0, "failed": 1, "waiting_approval": 3, "waiting_person": 3, "interrupted": 3}
REFUSED = {"refused", "clarification", "rejected", "aborted"}


def exit_code(status: str) -> int:
    return 4 if status in REFUSED else EXIT.get(status, 1)


def _runner(
    lab: LabConfig, model: str | None, console: Console, warm: list[str] | None = None
) -> Any:
    from agents.task.planning import make_planner
    from labwright.lab_runner import runner_for

    return runner_for(lab, make_planner(model), model=model, progress=Progress(console), warm=warm)


# --------------------------------------------------------------------------- driving
@contextlib.asynccontextmanager
async def operations(
    lab: LabConfig,
    model: str | None,
    console: Console,
    token: str | None = None,
    warm: list[str] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """The lab's operations over a started runner (``warm``: instruments whose servers start
    at once), and the person the CLI acts as."""
    from labwright.identity import cli_person, people_for
    from labwright.operations import Operations

    async with _runner(lab, model, console, warm) as runner:
        people = people_for(lab, runner.conn)
        try:
            person = cli_person(people, token)
        except PeopleError as exc:
            fail(f"{exc.code}: {exc}")
        yield Operations(runner, people), person


async def _settle(ops: Any, person: Any, outcome: Any, console: Console, yes: bool, detach: bool):
    """Show where a run stands; answer an approval in the terminal when asked to."""
    while outcome.waiting:
        payload = outcome.interrupt
        if payload.get("kind") == "approval":
            show_plan(console, payload)
            if detach:
                break
            answer = {"decision": "approve"} if yes else ask_approval()
            if answer is None:
                break
            outcome = await _decide(ops, person, outcome.run_id, answer, payload)
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


async def _decide(
    ops: Any, person: Any, run_id: str, answer: dict[str, Any], payload: dict[str, Any]
) -> Any:
    """One person's answer, through the lab's operations (as the web page answers)."""
    decision = answer.get("decision")
    if decision == "approve":
        return await ops.approve(person, run_id, payload.get("basis"))
    if decision == "edit":
        return await ops.edit(person, run_id, answer.get("text", ""))
    return await ops.reject(person, run_id, answer.get("reason") or "rejected at the terminal")


def ask_approval() -> dict[str, Any] | None:
    """Approve / reject / edit at the terminal; None when no one can answer (no TTY)."""
    if not sys.stdin.isatty():
        return None
    choice = typer.prompt("approve this plan? [y]es / [n]o / [e]dit the request", default="n")
    if choice.lower().startswith("y"):
        return {"decision": "approve"}
    if choice.lower().startswith("e"):
        return {"decision": "edit", "text": typer.prompt("new request")}
    return {"decision": "reject", "reason": typer.prompt("reason", default="rejected")}


def _go(coro: Any) -> None:
    from agents.mcp_client import LabServersStale, unavailable_in

    try:
        outcome = asyncio.run(coro)
    except LabServersStale as exc:
        fail(str(exc))
    except (OperationError, PeopleError) as exc:
        fail(f"{exc.code}: {exc}")
    except Exception as exc:
        unavailable = unavailable_in(exc)
        if unavailable is None:
            raise
        fail(str(unavailable))
    raise typer.Exit(exit_code(outcome.status))


TokenOpt = typer.Option(
    None,
    "--token",
    help="Act as this token's holder (default: $LABWRIGHT_PERSON_TOKEN, else "
    "the local operator at this terminal).",
)


def run(
    request: str = typer.Argument(..., help="What to do, in plain lab English."),
    config: Path | None = ConfigOpt,
    yes: bool = typer.Option(False, "--yes", help="Approve the plan (scripted use)."),
    detach: bool = typer.Option(False, "--detach", help="Leave the run waiting for approval."),
    model: str | None = typer.Option(None, help="provider:name of a chat model to plan with."),
    run_id: str | None = typer.Option(None, help="Choose the run id."),
    token: str | None = TokenOpt,
    sequential: bool = typer.Option(
        False,
        "--sequential",
        help="One step after another, in plan order (default: steps on different instruments "
        "that do not depend on each other run at the same time).",
    ),
) -> None:
    """Plan, simulate, ask for approval, then execute a request on the lab."""
    lab = lab_of(config)
    if not request.strip():
        fail("the request is empty")

    async def go() -> Any:
        async with operations(lab, model, out, token) as (ops, person):
            outcome = await ops.create(person, request, run_id, sequential=sequential)
            return await _settle(ops, person, outcome, out, yes, detach)

    _go(go())


def _answer(
    config: Path | None,
    run_id: str,
    answer: dict[str, Any] | None,
    model: str | None,
    token: str | None,
) -> None:
    lab = lab_of(config)
    from state_store import TaskRuns

    # Before any instrument server is started for it.
    runs = TaskRuns(task_db(lab)) if has_records(lab) else None
    if runs is None or not runs.exists(run_id):
        fail(f"no task run {run_id!r} (see `labwright runs`)")
    # A run that goes on uses its plan's instruments: their servers start side by side while
    # this process loads the task graph and the run, not one by one at their first call.
    goes_on = answer is None or answer["decision"] not in ("reject", "abort")
    warm = runs.instruments(run_id) if goes_on else []

    async def go() -> Any:
        async with operations(lab, model, out, token, warm) as (ops, person):
            current = await ops.runner.outcome(run_id)
            if answer is None:
                outcome = await ops.resume(person, run_id)
            elif not current.waiting:
                fail(f"run {run_id} is not waiting for a person (status {current.status})")
            elif answer["decision"] == "approve" and current.interrupt.get("kind") != "approval":
                if current.interrupt.get("about") != "approval_required":
                    fail(
                        f"run {run_id} waits on {current.interrupt.get('kind')}: answer with "
                        f"`labwright resume {run_id} --decision retry|skip|abort`"
                    )
                outcome = await ops.approve_action(person, run_id)
            elif answer["decision"] == "approve" and answer.get("no_run"):
                outcome = await ops.approve(person, run_id, drive=False)
                out.print(
                    f"approval of {run_id} recorded for {person.label}; it goes ahead with "
                    f"`labwright resume {run_id}`",
                    highlight=False,
                )
                return outcome
            elif answer["decision"] == "approve":
                outcome = await ops.approve(person, run_id)
            elif answer["decision"] == "reject":
                outcome = await ops.reject(person, run_id, answer["reason"])
            else:
                outcome = await ops.answer(person, run_id, answer["decision"])
            return await _settle(ops, person, outcome, out, yes=False, detach=True)

    _go(go())


def approve(
    run_id: str = typer.Argument(...),
    config: Path | None = ConfigOpt,
    model: str | None = typer.Option(None, help="provider:name (if the run plans with one)."),
    token: str | None = TokenOpt,
    no_run: bool = typer.Option(
        False,
        "--no-run",
        help="Only record the signed approval: the next `labwright resume` (here, or on a host "
        "sharing the lab's database) goes ahead with it.",
    ),
) -> None:
    """Approve a run's plan (or an instrument's request for approval), then continue it."""
    _answer(config, run_id, {"decision": "approve", "no_run": no_run}, model, token)


def reject(
    run_id: str = typer.Argument(...),
    reason: str = typer.Option(..., "--reason", help="Why."),
    config: Path | None = ConfigOpt,
    token: str | None = TokenOpt,
) -> None:
    """Reject a run's plan; nothing is executed."""
    _answer(config, run_id, {"decision": "reject", "reason": reason}, None, token)


def resume(
    run_id: str = typer.Argument(...),
    config: Path | None = ConfigOpt,
    decision: str | None = typer.Option(
        None,
        help="Answer to a question: retry (only what is left), skip, replan (the rest, from "
        "what the instruments report) or abort. Without: continue after a crash.",
    ),
    model: str | None = typer.Option(None),
    token: str | None = TokenOpt,
) -> None:
    """Continue a run: after a crash, or with a person's answer to its question."""
    if decision is not None and decision not in DECISIONS:
        fail(f"--decision is one of {', '.join(DECISIONS)}")
    answer = None if decision is None else {"decision": decision}
    _answer(config, run_id, answer, model, token)


def runs(config: Path | None = ConfigOpt, limit: int = typer.Option(20)) -> None:
    """List task runs, newest first."""
    from state_store import TaskRuns

    lab = lab_of(config)
    table = Table("run", "status", "created", "request")
    for r in TaskRuns(task_db(lab)).list(limit=limit):
        created = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.created_at))
        table.add_row(r.run_id, r.status, created, r.request[:70])
    out.print(table)


def show(run_id: str = typer.Argument(...), config: Path | None = ConfigOpt) -> None:
    """A run's request, plan, status and report."""
    from state_store import TaskRuns

    lab = lab_of(config)
    run_ = TaskRuns(task_db(lab)).get(run_id)
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
    from state_store import AuditLog, TaskRuns

    lab = lab_of(config)
    conn = task_db(lab)
    if not TaskRuns(conn).exists(run_id):
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
