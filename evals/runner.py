"""Run scenarios through the real stack and judge them from ground truth.

Each run gets its own state directory (its own lab database and simulated world) and its own
MCP device servers as subprocesses. A run goes through the entry points a user has: the
:class:`agents.task.runner.TaskRunner` API (answers to approvals and escalations scripted
from the scenario), or, for a scenario that crashes the whole process, the ``labwright`` CLI
in a subprocess that is killed mid-run and then resumed with ``labwright resume``.
Outcomes and safety are judged from the world, the ledgers and the audit log
(:mod:`evals.safety`), never from what an agent says.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import yaml

from device_servers.lab import load
from device_servers.sim.world import SimWorld
from evals.disturb import EVAL_PERSON, Disturbances
from evals.judge import ScenarioResult, _Run, ground_truth, judge
from evals.scenario import EditAnswer, Scenario
from state_store import Approvals, TaskRuns, connect

__all__ = ["ScenarioResult", "ground_truth", "run_scenario", "run_suite"]

MAX_INTERACTIONS = 20


# --------------------------------------------------------------------------- suite
async def run_suite(
    scenarios: list[Scenario],
    *,
    model: str | None = None,
    repeat: int = 1,
    jobs: int | None = None,
    on_done: Callable[[ScenarioResult], None] | None = None,
    keep: Path | None = None,
    planner: Callable[[], Any] | None = None,
) -> list[ScenarioResult]:
    """Run every scenario ``repeat`` times, ``jobs`` at a time (default: one per core).

    ``planner`` makes each run's planner (e.g. an LLM planner on a scripted model in CI);
    by default the one ``labwright run --model`` would use.
    """
    jobs = jobs or max(1, min(os.cpu_count() or 1, 4))
    gate = asyncio.Semaphore(jobs)
    base = Path(tempfile.mkdtemp(prefix="labwright-eval-")) if keep is None else keep
    results: list[ScenarioResult] = []

    async def one(sc: Scenario, k: int) -> None:
        async with gate:
            work = base / f"{sc.name}-{k}"
            result = await run_scenario(sc, work, model=model, repeat=k, planner=planner)
            results.append(result)
            if on_done is not None:
                on_done(result)
            if keep is None:
                shutil.rmtree(work, ignore_errors=True)

    # Costliest first (a crash-and-resume, then the most servers) keeps every lane busy.
    def cost(s: Scenario) -> tuple[bool, int]:
        return not s.all_crashes, -(len(s.instruments) if s.instruments else 99)

    order = sorted(scenarios, key=cost)
    async with anyio.create_task_group() as tg:
        for k in range(1, repeat + 1):
            for sc in order:
                tg.start_soon(one, sc, k)
    if keep is None:
        shutil.rmtree(base, ignore_errors=True)
    key = {(s.name): i for i, s in enumerate(scenarios)}
    return sorted(results, key=lambda r: (key[r.name], r.repeat))


async def run_scenario(
    sc: Scenario,
    work: Path,
    *,
    model: str | None = None,
    repeat: int = 1,
    planner: Callable[[], Any] | None = None,
) -> ScenarioResult:
    """Run one scenario in ``work`` (its state directory) and judge it; a scenario that
    compares its world with the uncrashed run's runs that reference first, in
    ``work/reference``."""
    reference = None
    if sc.expect.world_equals_uncrashed:
        reference = work / "reference"
        ref = await _execute(sc.uncrashed(), reference, model, repeat, planner)
        if ref[1].status in ("error", "timeout"):
            reference = None  # judged as a failure below
    lab_data, run, elapsed = await _execute(sc, work, model, repeat, planner)
    if sc.expect.world_equals_uncrashed and reference is None:
        run.error = run.error or "the uncrashed reference run did not finish"
    return judge(sc, lab_data, work, run, elapsed, repeat, reference=reference)


async def _execute(
    sc: Scenario,
    work: Path,
    model: str | None,
    repeat: int,
    planner: Callable[[], Any] | None,
) -> tuple[dict[str, Any], _Run, float]:
    work.mkdir(parents=True, exist_ok=True)
    lab_data = sc.lab()
    lab_data["state_dir"] = str(work)
    lab_file = work / "lab.yaml"
    lab_file.write_text(yaml.safe_dump(lab_data, sort_keys=False))
    run_id = f"eval-{sc.name}-{repeat}-{uuid.uuid4().hex[:6]}"
    t0 = time.monotonic()
    try:
        with anyio.fail_after(sc.timeout_s):
            if sc.all_crashes:
                run = await _run_cli_crash(sc, lab_file, work, run_id)
            else:
                run = await _run_api(sc, lab_file, work, run_id, model, planner)
    except TimeoutError:
        run = _Run(run_id, status="timeout", error=f"no outcome within {sc.timeout_s:.0f} s")
    except Exception as exc:  # a harness or stack failure is a failed scenario, shown as such
        run = _Run(run_id, status="error", error=f"{type(exc).__name__}: {exc}")
    return lab_data, run, time.monotonic() - t0


# --------------------------------------------------------------------------- the API path
def _answer_for(sc: Scenario, given: int, payload: dict[str, Any]) -> dict[str, Any]:
    """The person's next scripted answer, as the resume payload the runner takes."""
    kind = payload.get("kind")
    scripted = sc.answers[given] if given < len(sc.answers) else None
    if scripted is None:
        scripted = "approve" if kind == "approval" else "abort"
    if isinstance(scripted, EditAnswer):
        return {"decision": "edit", "by": "eval", "text": scripted.edit}
    return {"decision": scripted, "by": "eval"}


async def _run_api(
    sc: Scenario,
    lab_file: Path,
    work: Path,
    run_id: str,
    model: str | None,
    planner: Callable[[], Any] | None = None,
) -> _Run:
    from agents.task.planning import make_planner
    from agents.task.runner import TaskRunner

    lab = load(lab_file)
    run = _Run(run_id)
    world = SimWorld(work / f"{lab.lab}.world.sqlite")
    script = Disturbances(sc, world, run)

    def progress(what: str, data: dict[str, Any]) -> None:
        if what == "dispatch":
            attempt = f" attempt {data['attempt']}" if data.get("attempt", 1) > 1 else ""
            run.events.append(f"dispatch {data['step']} {data['instrument']}.{data['command']}")
            run.events[-1] += attempt
            script.on_dispatch(data["step"])
        else:
            run.events.append(f"{what} {json.dumps(data, default=str)[:200]}")

    runner = TaskRunner(
        list(lab.instruments),
        lab_file,
        work / f"{lab.lab}.sqlite",
        planner() if planner is not None else make_planner(model),
        env={"LABWRIGHT_STATE_DIR": str(work)},
        model=model,
        progress=progress,
    )
    try:
        async with runner:
            script.runner = runner
            outcome = await runner.start(sc.request, run_id)
            given = 0
            while outcome.waiting and given < MAX_INTERACTIONS:
                payload = outcome.interrupt or {}
                answer = _answer_for(sc, given, payload)
                given += 1
                if payload.get("kind") == "approval":
                    run.approvals += 1
                    run.events.append(f"person: plan {answer['decision']}")
                else:
                    run.escalations += 1
                    run.interventions += 1
                    run.questions.append(json.dumps(payload, default=str))
                    run.events.append(
                        f"escalation at {payload.get('step')}: {payload.get('reason')} "
                        f"({_code(payload)}) -> person: {answer['decision']}"
                    )
                    await script.settle()
                    await script.before_answer(run_id)
                    about = payload.get("about") or payload.get("kind")
                    if about == "approval_required" and answer["decision"] == "approve":
                        answer = _grant(runner, payload, answer)
                outcome = await runner.resume(run_id, answer)
            await script.settle()
            run.status = outcome.status
            values = outcome.values or {}
            run.answer = values.get("answer")
    finally:
        world.close()
    return run


def _code(payload: dict[str, Any]) -> str | None:
    error = (payload.get("observation") or {}).get("error") or {}
    return error.get("code")


def _grant(runner: Any, payload: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """A person grants what an instrument asked approval for (as `labwright approve` does)."""
    obs = payload.get("observation") or {}
    approvals = Approvals(runner.conn)
    granted = []
    for req in approvals.pending(obs.get("instrument")):
        if req.action_id == obs.get("action_id"):
            approvals.grant(req.instrument, req.action_id, EVAL_PERSON)
            granted.append(req.action_id)
    return {**answer, "decision": "approved", "granted": granted}


# --------------------------------------------------------------------------- the CLI path
def _labwright() -> list[str]:
    script = Path(sys.executable).with_name("labwright")
    return [str(script)] if script.exists() else [sys.executable, "-m", "labwright"]


async def _cli(
    args: list[str], work: Path, kill_on: str | None = None, delay: float = 0.0
) -> tuple[int, list[str], bool]:
    """Run ``labwright ARGS``; with ``kill_on``, SIGKILL its whole process group (agent and
    servers) as soon as a line containing it is printed. (exit code, output lines, killed)."""
    env = {**os.environ, "LABWRIGHT_STATE_DIR": str(work), "PYTHONUNBUFFERED": "1"}
    env["COLUMNS"] = "200"
    proc = await asyncio.create_subprocess_exec(
        *_labwright(),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        stdin=asyncio.subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    lines: list[str] = []
    killed = False
    assert proc.stdout is not None
    try:
        async for raw in proc.stdout:
            line = raw.decode(errors="replace").rstrip()
            lines.append(line)
            if kill_on is not None and kill_on in line:
                await asyncio.sleep(delay)
                os.killpg(proc.pid, signal.SIGKILL)
                lines.append("<< killed -9 (agent process and its servers) >>")
                killed = True
                break
        return await proc.wait(), lines, killed
    finally:
        if proc.returncode is None:
            _kill_group(proc.pid)
            await proc.wait()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


async def _run_cli_crash(sc: Scenario, lab_file: Path, work: Path, run_id: str) -> _Run:
    """``labwright run --yes``, killed at each of the scenario's crashes in turn (the next
    one in the next process: a kill while resuming, while recovering), resumed after each,
    and the person's questions answered with ``labwright approve/resume --decision``."""
    run = _Run(run_id)
    crashes = list(sc.all_crashes)
    cfg = ["-c", str(lab_file)]
    args = ["run", sc.request, "--yes", "--run-id", run_id, *cfg]
    run.approvals += 1
    given = 1 if sc.answers and sc.answers[0] == "approve" else 0
    for _ in range(MAX_INTERACTIONS + len(crashes)):
        crash = crashes[0] if crashes else None
        code, lines, killed = await _cli(
            args, work, crash.marker if crash else None, crash.delay_s if crash else 0.0
        )
        run.events.extend(_progress_lines(lines))
        if killed:
            crashes.pop(0)
            args = ["resume", run_id, *cfg]
            run.events.append("resume after the crash")
            continue
        if code != 3:
            break
        scripted = sc.answers[given] if given < len(sc.answers) else "abort"
        given += 1
        run.escalations += 1
        run.interventions += 1
        run.questions.append("\n".join(_question(lines)))
        if scripted == "approve":
            args = ["approve", run_id, *cfg]
        else:
            args = ["resume", run_id, "--decision", str(scripted), *cfg]
        run.events.append(f"person: {' '.join(args[:1] + args[2:3])}")
    if crashes:
        run.error = f"{len(crashes)} crash(es) never happened: {[c.marker for c in crashes]}"
    conn = connect(work / f"{load(lab_file).lab}.sqlite")
    try:
        row = TaskRuns(conn).get(run_id)
    finally:
        conn.close()
    status = row.status if row is not None else "unknown"
    run.status = {"cancelled": "aborted"}.get(status, status)
    return run


def _question(lines: list[str]) -> list[str]:
    """What the CLI printed from its last question to a person on."""
    starts = [i for i, ln in enumerate(lines) if "a person is needed" in ln]
    return lines[starts[-1] :] if starts else []


def _progress_lines(lines: list[str]) -> list[str]:
    keep = re.compile(r"^\s+\[\s*\d+/\d+\]|retry|in_doubt|a person is needed|report:|killed")
    return [ln.strip() for ln in lines if keep.search(ln)]
