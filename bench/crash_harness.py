#!/usr/bin/env python3
"""Crash harness: kill -9 a running task (the task process AND its servers) again and again.

A machine crash takes down the ``labwright run`` process and every ``labwright serve`` child
it started. This harness starts ``labwright run "<request>" --yes --run-id R`` in its own
process group, SIGKILLs the whole group at random points (seeded), runs ``labwright resume R``
(which it may kill again) until the run finishes, and answers a person's question only when
the run legitimately asks one (counted as interventions). It then judges the outcome from
the simulated world and the action ledger, never from what the agent printed:

- the final world equals an uninterrupted run's (every well volume within 1e-6, tips left);
- no action executed twice: physical ops are attributed to ledger actions by time (one
  instrument executes one action at a time) and no action id carries more ops than the same
  action id in the uninterrupted run; op counts per kind equal the uninterrupted run's;
- no action lost: every plan step has a finished (done) action, or an in-doubt one resolved;
- in-doubt actions, and how each was resolved (read back, or escalated to a person);
- kills during recovery itself: after some kills, the resumed process is killed again as it
  completes the in-doubt action the kill left (``--recovery-kills``);
- kills during concurrent steps (``--concurrent``): the whole example lab (liquid handler,
  reader, heater-shaker, arm) runs a two-plate prepare-shake-read plan twice over, whose steps on
  different instruments run at the same time; a kill counts as concurrent when two or more
  instruments had an action under way (their ledgers: started before the kill, finished
  after it). No step may have more finished actions than in the uninterrupted run (the
  heater-shaker and the reader leave no physical operations to count), and every plate must
  end where it does there. Two kills in three wait until two instruments have an action
  under way (polling their ledgers) and land then; the others fall at random.
  A shake cut by a kill stays in doubt (how long it ran is unknown): the stand-in person
  skips it (it is never sent again), and the summary counts these interventions.

``bench/crash_estop.py`` (also run by ``make crash``) presses an e-stop while a resumed run
completes an in-doubt action, and checks the run ends as an uninterrupted one.

Usage::

    .venv/bin/python bench/crash_harness.py [--kills 50] [--seed 1] [--quick] [--concurrent]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import pty
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from device_servers.lab import load  # noqa: E402
from device_servers.sim.world import SimWorld  # noqa: E402
from state_store import TaskRuns, connect  # noqa: E402

ROWS = "ABCDEFGH"
DILUTION = "make a 2-fold serial dilution of dye across row {row} of plate_1, 100 uL final volume"
# 8 rows x 23 transfers = 184 transfers in 128 steps, 112 tips (the lab has 192).
FULL_REQUEST = " then ".join(DILUTION.format(row=r) for r in ROWS)
# 23 transfers in 16 steps.
QUICK_REQUEST = DILUTION.format(row="A")
# Two plates, each prepared, shaken and read: 22 steps on four instruments.
TWO_PLATES = (
    "transfer 100 uL of dye to A1:A3 of plate_1, then shake plate_1 at 600 rpm for 5 minutes, "
    "then read absorbance of plate_1 at 600 nm, then transfer 100 uL of dye to A1:A3 of "
    "plate_2, then shake plate_2 at 600 rpm for 5 minutes, then read absorbance of plate_2 at "
    "600 nm"
)
# Twice over (A1:A3, then A4:A6 of each plate): 44 steps, long enough for 20 kills.
TWO_PLATES_TWICE = f"{TWO_PLATES}, then {TWO_PLATES.replace('A1:A3', 'A4:A6')}"
RUN_ID = "crash-run"
STEP_LINE = re.compile(r"^\s*\[\s*\d+/\d+\]\s+(\S+)")
QUESTION_LINE = re.compile(r"^step (\S+): (.*)$")
COMPLETING = "completing the rest"  # printed just before an in-doubt action is completed
PROCESS_TIMEOUT_S = 300.0


def write_lab(directory: Path, delay_s: float = 0.0, whole: bool = False) -> Path:
    """The example lab's liquid handler alone (``whole``: every instrument, the heater-shaker
    5x slower so a shake takes 2.5 s), state in ``directory``, a delay per liquid-handler
    operation."""
    directory.mkdir(parents=True, exist_ok=True)
    lab = yaml.safe_load((ROOT / "examples" / "lab.yaml").read_text())
    if not whole:
        lab["instruments"] = [i for i in lab["instruments"] if i["kind"] == "liquid_handler"]
    for inst in lab["instruments"]:
        if inst["kind"] == "heater_shaker":
            inst["time_scale"] = 120  # more wall time for other instruments' steps to overlap
    lab["state_dir"] = str(directory / "state")
    if delay_s > 0:
        lab["instruments"][0]["faults"] = [
            {"kind": "delay", "times": -1, "params": {"seconds": delay_s}}
        ]
    path = directory / "lab.yaml"
    path.write_text(yaml.safe_dump(lab, sort_keys=False))
    return path


def _env() -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("LABWRIGHT_STATE_DIR", "LABWRIGHT_MODEL")
    }
    env["PYTHONUNBUFFERED"] = "1"
    return env


def labwright_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "labwright", *args]


@dataclass
class Segment:
    """One process of the run: its command, how it ended and what it printed."""

    argv: list[str]
    killed: bool = False
    killed_at: float | None = None  # wall clock of the kill
    killed_on_line: bool = False  # killed as it printed ``kill_on``
    rc: int | None = None
    lines: list[str] = field(default_factory=list)
    seconds: float = 0.0


def spawn(argv: list[str], stdin: int = subprocess.DEVNULL) -> subprocess.Popen[str]:
    """One labwright process in its own process group (the task process and its servers, so
    a kill takes them all), its output and errors merged on one text pipe."""
    return subprocess.Popen(
        argv,
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=stdin,
        text=True,
        start_new_session=True,
    )


def run_segment(
    argv: list[str],
    kill_after_s: float | None,
    after_first_step: bool,
    kill_on: str | None = None,
    kill_when: Callable[[], bool] | None = None,
) -> Segment:
    """Run one labwright process; SIGKILL its whole group ``kill_after_s`` after it started
    (or after it printed its first dispatched step, when ``after_first_step``), or as soon as
    it prints a line containing ``kill_on`` (a kill while it recovers), or (``kill_when``,
    polled every 5 ms once a step was dispatched) as soon as ``kill_when()`` holds."""
    seg = Segment(argv)
    t0 = time.monotonic()
    proc = spawn(argv)
    started = threading.Event()
    if not after_first_step:
        started.set()

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            seg.lines.append(line.rstrip("\n"))
            if STEP_LINE.match(line):
                started.set()
            if kill_on is not None and kill_on in line and proc.poll() is None:
                seg.killed_at = time.time()
                os.killpg(proc.pid, signal.SIGKILL)
                seg.killed = seg.killed_on_line = True

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    if kill_when is not None:
        while not started.wait(0.01) and proc.poll() is None:
            pass
        while proc.poll() is None and not kill_when():
            time.sleep(0.005)
        if proc.poll() is None:
            seg.killed_at = time.time()
            os.killpg(proc.pid, signal.SIGKILL)
            seg.killed = True
    elif kill_after_s is not None:
        deadline = t0 + PROCESS_TIMEOUT_S
        while not started.wait(0.01):
            if proc.poll() is not None or time.monotonic() > deadline:
                break
        t_start = time.monotonic()
        while proc.poll() is None and time.monotonic() - t_start < kill_after_s:
            time.sleep(0.005)
        if proc.poll() is None:
            seg.killed_at = time.time()
            os.killpg(proc.pid, signal.SIGKILL)  # a machine crash: nothing gets to clean up
            seg.killed = True
    try:
        proc.wait(timeout=PROCESS_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise RuntimeError(f"stuck: {argv[3:5]} did not end in {PROCESS_TIMEOUT_S} s") from None
    thread.join(timeout=10)
    _reap_group(proc.pid)
    seg.rc = None if seg.killed else proc.returncode
    seg.seconds = time.monotonic() - t0
    return seg


def _reap_group(pgid: int) -> None:
    """A killed group's servers die with it; make sure none lingers into the next segment."""
    for _ in range(200):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            return
        time.sleep(0.01)


@dataclass
class Tally:
    kills: int = 0
    recovery_kills: int = 0  # kills landed while an in-doubt action was being completed
    recovery_kills_missed: int = 0  # asked for, but that process had nothing to complete
    resumes: int = 0
    approvals: int = 0  # plan approvals lost with a killed `run --yes`, given again
    interventions: list[str] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)


def crash_run(
    lab: Path,
    request: str,
    kills: int,
    rng: random.Random,
    span_s: float,
    early: float = 0.15,
    recovery_kills: int = 0,
    overlap: bool = False,
) -> Tally:
    """Run ``request`` to its end through ``kills`` crashes, resuming after each; the first
    ``recovery_kills`` resumes after a kill are killed again as they complete the in-doubt
    action the kill left (a kill during recovery itself). With ``overlap``, two kills in three
    wait for two instruments to have an action under way (their ledgers) and land then."""
    tally = Tally()
    cfg = ("-c", str(lab))
    argv = labwright_argv("run", request, "--yes", "--run-id", RUN_ID, *cfg)
    during_recovery = False
    for _ in range(10 * kills + 50):
        kill_now = tally.kills < kills
        # Most crashes land while steps execute; some during start-up and in-doubt handling.
        early_kill = kill_now and rng.random() < early
        delay = rng.uniform(0.3, 3.0) if early_kill else rng.uniform(0.0, span_s)
        aim = overlap and kill_now and not early_kill and not during_recovery
        aim = aim and tally.kills % 3 != 2
        seg = run_segment(
            argv,
            delay if kill_now else None,
            after_first_step=not early_kill,
            kill_on=COMPLETING if during_recovery else None,
            kill_when=functools.partial(_concurrent, load(lab).db_path, time.time())
            if aim
            else None,
        )
        tally.segments.append(seg)
        _say(tally, seg)
        if during_recovery:
            tally.recovery_kills += seg.killed_on_line
            tally.recovery_kills_missed += not seg.killed_on_line
        # After a kill, the next process may be killed again as it recovers.
        during_recovery = (
            seg.killed
            and not during_recovery
            and tally.recovery_kills + tally.recovery_kills_missed < recovery_kills
        )
        if seg.killed:
            tally.kills += 1
        elif seg.rc == 0 or (seg.rc == 4 and any(i.endswith("abort") for i in tally.interventions)):
            return tally  # done, or aborted by the stand-in person (judged below)
        elif seg.rc == 3:
            argv = _answer(lab, seg, tally, skip_in_doubt=overlap)
            continue
        else:
            tail = "\n".join(seg.lines[-25:])
            raise RuntimeError(f"{' '.join(seg.argv[3:5])} ended with exit {seg.rc}:\n{tail}")
        if TaskRuns(connect(load(lab).db_path)).get(RUN_ID) is None:
            continue  # killed before the run was even recorded: nothing happened, run again
        tally.resumes += 1
        argv = labwright_argv("resume", RUN_ID, *cfg)
    raise RuntimeError("the run did not finish")


def _concurrent(db: Path, since: float) -> bool:
    """Whether two or more instruments have an action under way now that was started after
    ``since`` (this process's: one a kill cut stays unfinished in its ledger)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1.0)
    try:
        sql = (
            "SELECT COUNT(DISTINCT instrument) FROM actions WHERE finished_at IS NULL "
            "AND status = 'pending' AND started_at > ?"
        )
        return int(conn.execute(sql, (since,)).fetchone()[0]) >= 2
    except sqlite3.Error:
        return False
    finally:
        conn.close()


def _say(tally: Tally, seg: Segment) -> None:
    """One line per process, so a long harness run shows where it is."""
    steps = [m.group(1) for line in seg.lines if (m := STEP_LINE.match(line))]
    how = "killed" if seg.killed else f"exit {seg.rc}"
    print(
        f"  #{len(tally.segments):<3} {seg.argv[3]:<7} {how:<7} after {seg.seconds:5.1f} s; "
        f"steps {steps[0] + '..' + steps[-1] if steps else '-'}",
        file=sys.stderr,
        flush=True,
    )


def _answer(lab: Path, seg: Segment, tally: Tally, skip_in_doubt: bool = False) -> list[str]:
    """A person answers: the plan's approval, or an escalated step (judged at the deck).
    With ``skip_in_doubt``, a step whose action the read back could not settle (a shake cut
    by the kill: how long it ran is unknown) is left as it is (skip: never sent again)."""
    cfg = ("-c", str(lab))
    runs = TaskRuns(connect(load(lab).db_path))
    run = runs.get(RUN_ID)
    assert run is not None
    if run.status == "waiting_approval":
        tally.approvals += 1
        return labwright_argv("approve", RUN_ID, *cfg)
    asked = [m for line in seg.lines if (m := QUESTION_LINE.match(line.strip()))]
    step_id, reason = (asked[-1].group(1), asked[-1].group(2)) if asked else ("?", "?")
    # Any question after a crash is an intervention, and the harness never guesses for the
    # person (a blind retry could repeat a transfer): it aborts, and the verdict shows what
    # was left undone.
    decision = "skip" if skip_in_doubt and "ACTION_IN_DOUBT" in reason else "abort"
    tally.interventions.append(f"{step_id}: {reason} -> {decision}")
    return labwright_argv("resume", RUN_ID, "--decision", decision, *cfg)


def uninterrupted(lab: Path, request: str) -> Segment:
    seg = run_segment(
        labwright_argv("run", request, "--yes", "--run-id", RUN_ID, "-c", str(lab)),
        None,
        after_first_step=False,
    )
    if seg.rc != 0:
        raise RuntimeError("the uninterrupted run failed:\n" + "\n".join(seg.lines[-25:]))
    return seg


# --------------------------------------------------------------------------- judging
def _actions(lab: Path) -> list[dict[str, Any]]:
    conn = connect(load(lab).db_path)
    rows = conn.execute("SELECT * FROM actions ORDER BY started_at").fetchall()
    return [dict(r) for r in rows]


def _ops_by_action(lab: Path) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """Physical ops attributed to the action that was executing (one at a time per
    instrument): ops from an action's start to the next action's start are its own."""
    actions = _actions(lab)
    world = SimWorld(load(lab).world_path)
    ops = world.physical_ops()
    world.close()
    out: dict[str, list[dict[str, Any]]] = {a["action_id"]: [] for a in actions}
    orphans = []
    for op in ops:
        owner = None
        for a in actions:
            if a["instrument"] == op["instrument"] and a["started_at"] <= op["ts"]:
                owner = a["action_id"]
        if owner is None:
            orphans.append(op)
        else:
            out[owner].append(op)
    return out, orphans


def _world(lab: Path) -> dict[str, Any]:
    world = SimWorld(load(lab).world_path)
    labware = [r[0] for r in world.conn.execute("SELECT DISTINCT labware FROM wells")]
    racks = [r[0] for r in world.conn.execute("SELECT DISTINCT rack FROM tips")]
    snap = {
        "wells": {lw: world.wells(lw) for lw in labware},
        "tips": {r: world.tips(r) for r in racks},
        "channels": world.channels("lh1"),
        "plates": dict(world.conn.execute("SELECT labware, location FROM plates").fetchall()),
        "incidents": world.incidents(),
        "ops": [o["op"] for o in world.physical_ops()],
    }
    world.close()
    return snap


def judge(crashed: Path, baseline: Path, segments: list[Segment]) -> dict[str, Any]:
    """Compare the crashed run with the uninterrupted one, from the world and the ledgers."""
    got, want = _world(crashed), _world(baseline)
    volume_diffs = [
        f"{lw}:{w} {cell['volume_ul']:.6f} != {want['wells'][lw][w]['volume_ul']:.6f}"
        for lw, cells in got["wells"].items()
        for w, cell in cells.items()
        if abs(cell["volume_ul"] - want["wells"][lw][w]["volume_ul"]) > 1e-6
    ]
    content_diffs = [
        f"{lw}:{w} {liquid}"
        for lw, cells in got["wells"].items()
        for w, cell in cells.items()
        for liquid in set(cell["contents"]) | set(want["wells"][lw][w]["contents"])
        if abs(
            cell["contents"].get(liquid, 0.0) - want["wells"][lw][w]["contents"].get(liquid, 0.0)
        )
        > 1e-6
    ]
    tips_left = {r: sum(spots.values()) for r, spots in got["tips"].items()}
    tips_left_base = {r: sum(spots.values()) for r, spots in want["tips"].items()}
    ops_kinds = {k: got["ops"].count(k) for k in sorted(set(got["ops"]) | set(want["ops"]))}
    ops_kinds_base = {k: want["ops"].count(k) for k in ops_kinds}

    ops, orphans = _ops_by_action(crashed)
    ops_base, _ = _ops_by_action(baseline)
    duplicated = sorted(aid for aid, done in ops.items() if len(done) > len(ops_base.get(aid, [])))
    actions = _actions(crashed)
    # A step finished by more actions than in the uninterrupted run happened twice (what
    # the heater-shaker and the reader do leaves no physical operation to count).
    done, done_base = _done_per_step(actions), _done_per_step(_actions(baseline))
    duplicated += sorted(f"step {s}" for s, n in done.items() if n > done_base.get(s, 0))
    keys = [(a["instrument"], a["action_id"]) for a in actions]
    not_unique = len(keys) - len(set(keys))

    run = TaskRuns(connect(load(crashed).db_path)).get(RUN_ID)
    assert run is not None and run.plan is not None
    status = {a["action_id"]: a for a in actions}
    lost = []
    for step in run.plan["steps"]:
        mine = [a for aid, a in status.items() if aid.startswith(f"{RUN_ID}/{step['id']}/")]
        if not any(a["status"] in ("done", "in_doubt") for a in mine):
            lost.append(step["id"])
    # In doubt: the outcome was lost with a crash (read back after a restart), or still is.
    in_doubt = [
        a for a in actions if (a["note"] and "restart" in a["note"]) or a["status"] == "in_doubt"
    ]
    completed = [a for a in in_doubt if a["status"] == "done"]
    left_in_doubt = [a for a in in_doubt if a["status"] == "in_doubt"]
    resolved = _resolutions(segments)
    said = " ".join(line for seg in segments for line in seg.lines)
    transfers = [int(n) for n in re.findall(r"; (\d+) transfers", said)]
    kills = [seg.killed_at for seg in segments if seg.killed_at is not None]
    return {
        "steps": len(run.plan["steps"]),
        "kills_concurrent": sum(1 for t in kills if len(_under_way(actions, t, kills)) >= 2),
        "transfers": transfers[0] if transfers else None,
        "completion_rounds": said.count("read back: completing the rest"),
        "final_status": run.status,
        "volume_diffs": volume_diffs,
        "content_diffs": content_diffs,
        "tips_left": tips_left,
        "tips_left_uninterrupted": tips_left_base,
        "tips_on_channels": sum(1 for c in got["channels"] if c["tip"]),
        "plate_diffs": sorted(
            f"{p} at {where} != {want['plates'].get(p)}"
            for p, where in got["plates"].items()
            if want["plates"].get(p) != where
        ),
        "ops_per_kind": ops_kinds,
        "ops_per_kind_uninterrupted": ops_kinds_base,
        "duplicated": duplicated,
        "ledger_rows_not_unique": not_unique,
        "orphan_ops": len(orphans),
        "lost": lost,
        "in_doubt": [a["action_id"] for a in in_doubt],
        "in_doubt_completed": [a["action_id"] for a in completed],
        "in_doubt_left": [a["action_id"] for a in left_in_doubt],
        "resolutions": resolved,
        "incidents": len(got["incidents"]) - len(want["incidents"]),
    }


def _done_per_step(actions: list[dict[str, Any]]) -> dict[str, int]:
    """Finished (done) actions per plan step, from the ledgers."""
    out: dict[str, int] = {}
    for a in actions:
        if a["status"] == "done" and a["action_id"].startswith(f"{RUN_ID}/"):
            step = a["action_id"].split("/")[1]
            out[step] = out.get(step, 0) + 1
    return out


def _under_way(actions: list[dict[str, Any]], t: float, kills: list[float]) -> set[str]:
    """Instruments that had an action under way at ``t``: started before, not finished, and
    not cut by an earlier kill (an action never outlives the first kill after its start: its
    server dies with the group; it may be finished later, completed from a read back)."""
    out = set()
    for a in actions:
        cut = min((k for k in kills if k >= a["started_at"]), default=None)
        ends = [x for x in (a["finished_at"], cut) if x is not None]
        if a["started_at"] <= t and (not ends or t <= min(ends)):
            out.add(a["instrument"])
    return out


def _resolutions(segments: list[Segment]) -> dict[str, str]:
    """How each in-doubt step was resolved, as the agent said it (last word per step)."""
    out: dict[str, str] = {}
    for seg in segments:
        for line in seg.lines:
            if "in_doubt_resolved" in line:
                m = re.search(r"'step': '([^']+)'.*'how': '([^']+)'", line)
                if m:
                    out[m.group(1)] = m.group(2)
    return out


def ok(verdict: dict[str, Any]) -> bool:
    return (
        verdict["final_status"] == "done"
        and not verdict["volume_diffs"]
        and not verdict["content_diffs"]
        and verdict["tips_left"] == verdict["tips_left_uninterrupted"]
        and verdict["tips_on_channels"] == 0
        and not verdict["plate_diffs"]
        and verdict["ops_per_kind"] == verdict["ops_per_kind_uninterrupted"]
        and not verdict["duplicated"]
        and verdict["ledger_rows_not_unique"] == 0
        and not verdict["lost"]
        and verdict["incidents"] == 0
    )


# --------------------------------------------------------------------------- approval crash
def kill_while_waiting_for_approval(directory: Path, request: str, rng: random.Random) -> dict:
    """``run`` (no --yes) on a terminal sits at the approval prompt; kill its whole group
    there, approve from another process, and check that nothing moved before the approval
    and the run then completes as an uninterrupted one does."""
    lab = write_lab(directory)
    cfg = ("-c", str(lab))
    db = load(lab).db_path
    primary, secondary = pty.openpty()  # a terminal on stdin: `run` asks and waits
    proc = spawn(labwright_argv("run", request, "--run-id", RUN_ID, *cfg), stdin=secondary)
    os.close(secondary)
    lines: list[str] = []
    thread = threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True)
    thread.start()
    deadline = time.monotonic() + PROCESS_TIMEOUT_S
    while proc.poll() is None and time.monotonic() < deadline:
        # Either sign will do: the store says so, or the plan's simulation summary has been
        # printed (the prompt comes right after it).
        if _status(db) == "waiting_approval" or any("simulation (twins" in x for x in lines):
            break
        time.sleep(0.05)
    time.sleep(rng.uniform(0.1, 0.5))  # at the prompt, with nobody answering
    waiting = proc.poll() is None
    if waiting:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=PROCESS_TIMEOUT_S)
    thread.join(timeout=10)
    _reap_group(proc.pid)
    os.close(primary)
    world = SimWorld(load(lab).world_path)
    moved_before = len(world.physical_ops())
    world.close()
    approve = run_segment(labwright_argv("approve", RUN_ID, *cfg), None, False)
    run = TaskRuns(connect(db)).get(RUN_ID)
    world = SimWorld(load(lab).world_path)
    moved = len(world.physical_ops())
    world.close()
    return {
        "killed_at_prompt": waiting,
        "physical_ops_before_approval": moved_before,
        "approve_exit": approve.rc,
        "status": None if run is None else run.status,
        "physical_ops": moved,
        "lab": lab,
    }


def _status(db: Path) -> str | None:
    """The run's status, read only (never racing the process that creates the store)."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            row = conn.execute("SELECT status FROM runs WHERE run_id=?", (RUN_ID,)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return None if row is None else str(row[0])


def approval_ok(result: dict[str, Any], baseline: Path | None = None) -> bool:
    """Killed at the prompt, nothing moved until approved, then done (the same world as an
    uninterrupted run of the same request, when one is given)."""
    same = True
    if baseline is not None:
        got, want = _world(result["lab"]), _world(baseline)
        same = got["wells"] == want["wells"] and got["tips"] == want["tips"]
    return bool(
        result["killed_at_prompt"]
        and result["physical_ops_before_approval"] == 0
        and result["approve_exit"] == 0
        and result["status"] == "done"
        and result["physical_ops"] > 0
        and same
    )


# --------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kills", type=int, default=50)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="5 kills of a one-row dilution")
    p.add_argument("--delay", type=float, default=0.01, help="simulated seconds per operation")
    p.add_argument("--keep", action="store_true", help="keep the temp labs")
    p.add_argument("--json", type=Path, help="write the verdict here")
    p.add_argument(
        "--recovery-kills",
        type=int,
        default=None,
        help="resumes killed again while completing an in-doubt action (default 10; quick 2)",
    )
    p.add_argument(
        "--concurrent",
        action="store_true",
        help="kill a two-plate prepare-shake-read run on the whole lab, whose steps on "
        "different instruments run at the same time",
    )
    args = p.parse_args(argv)
    kills = 5 if args.quick and args.kills == 50 else args.kills
    again = args.recovery_kills if args.recovery_kills is not None else (2 if args.quick else 10)
    request = QUICK_REQUEST if args.quick else FULL_REQUEST
    delay = args.delay
    if args.concurrent:
        # 20 kills by default; liquid-handler operations slow enough to overlap a shake.
        request, delay = TWO_PLATES_TWICE, max(args.delay, 0.05)
        kills = args.kills if args.kills != 50 else (5 if args.quick else 20)
        # Most kills aim at concurrent steps; a few at in-doubt completions.
        again = args.recovery_kills if args.recovery_kills is not None else (1 if args.quick else 3)
    rng = random.Random(args.seed)
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="labwright-crash-"))
    base_lab = write_lab(tmp / "uninterrupted", delay, whole=args.concurrent)
    crash_lab = write_lab(tmp / "crashed", delay, whole=args.concurrent)
    print(f"labs in {tmp}; request: {len(request)} chars; {kills} kills, seed {args.seed}")
    base: list[Segment] = []
    worker = threading.Thread(target=lambda: base.append(uninterrupted(base_lab, request)))
    worker.start()  # the reference run, beside the crashed one
    span = (2.5 if args.concurrent else 1.2) if not args.quick else 0.8
    tally = crash_run(
        crash_lab, request, kills, rng, span, recovery_kills=again, overlap=args.concurrent
    )
    worker.join()
    verdict = judge(crash_lab, base_lab, tally.segments)
    approval = kill_while_waiting_for_approval(tmp / "approval", QUICK_REQUEST, rng)
    approved = approval_ok(approval, base_lab if args.quick else None)
    wall = time.monotonic() - t0
    there = sum(1 for how in verdict["resolutions"].values() if how.endswith("effect is there"))
    summary = {
        "steps": verdict["steps"],
        "transfers (simulation summary)": verdict["transfers"],
        "kills": tally.kills,
        "of them while 2+ instruments had an action under way": verdict["kills_concurrent"],
        "of them while completing an in-doubt action": tally.recovery_kills,
        "resumes that had nothing in doubt to complete": tally.recovery_kills_missed,
        "resumes": tally.resumes,
        "plan approvals given again": tally.approvals,
        "in-doubt actions": len(verdict["in_doubt"]),
        "resolved by read back, rest completed": len(verdict["in_doubt_completed"]),
        "completions sent (one more per kill while completing)": verdict["completion_rounds"],
        "resolved by read back, effect there": there,
        "left in doubt (unresolved)": len(verdict["in_doubt_left"]) - there,
        "escalations (interventions)": len(tally.interventions),
        "  of them in-doubt steps skipped by the stand-in person": sum(
            1 for i in tally.interventions if i.endswith("-> skip")
        ),
        "duplicated actions": len(verdict["duplicated"]),
        "lost actions": len(verdict["lost"]),
        "world equals uninterrupted": not verdict["volume_diffs"]
        and not verdict["content_diffs"]
        and not verdict["plate_diffs"]
        and verdict["tips_left"] == verdict["tips_left_uninterrupted"],
        "tips left": verdict["tips_left"],
        "physical ops per kind": verdict["ops_per_kind"],
        "kill while waiting for approval, approve elsewhere": "ok" if approved else approval,
        "wall time (s)": round(wall, 1),
    }
    width = max(len(k) for k in summary)
    print("\ncrash harness summary")
    for k, v in summary.items():
        print(f"  {k:<{width}}  {v}")
    for item in tally.interventions:
        print(f"  intervention: {item}")
    for step, how in sorted(verdict["resolutions"].items()):
        print(f"  in doubt {step}: {how}")
    if not ok(verdict):
        print(json.dumps(verdict, indent=2, default=str))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "verdict": verdict}, default=str))
    if not args.keep and ok(verdict) and approved:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok(verdict) and approved else 1


if __name__ == "__main__":
    raise SystemExit(main())
