"""The task agent's CLI through the real entry point (``python -m labwright``) on the
example lab's four simulated instruments, state in a temp dir. Exit codes: 0 done, 2 bad
input, 3 waiting for a person, 4 refused / rejected. Outcomes are judged from the simulated
world, never only from what the CLI printed."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, labwright

from device_servers.lab import load
from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.slow

READ_REQUEST = "add 100 uL of dye to plate_1 A1 then read absorbance of plate_1 at 600 nm"
ADD_REQUEST = "add 50 uL of buffer to plate_2 A1"


@pytest.fixture
def lab_file(tmp_path: Path) -> Path:
    """The example lab (lh1, reader1, hs1, arm1) with its state in ``tmp_path``; the arm
    moves fast so plate moves take a fraction of a second."""
    data: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "lab.yaml").read_text())
    data["state_dir"] = str(tmp_path / "state")
    for inst in data["instruments"]:
        if inst["kind"] == "plate_mover":
            inst["time_scale"] = 400
        if inst["kind"] == "heater_shaker":
            inst["time_scale"] = 600
    path = tmp_path / "lab.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def world_of(lab_file: Path) -> SimWorld:
    return SimWorld(load(lab_file).world_path)


def moved(lab_file: Path) -> int:
    """Physical operations the simulated world saw (0 when no server ever ran)."""
    path = load(lab_file).world_path
    if not path.exists():
        return 0
    world = SimWorld(path)
    try:
        return len(world.physical_ops())
    finally:
        world.close()


def no_traceback(result: Any) -> None:
    assert "Traceback" not in result.stdout + result.stderr


def test_run_yes_executes_and_reports_the_reading(lab_file: Path) -> None:
    cfg = ("-c", str(lab_file))
    result = labwright("run", READ_REQUEST, "--yes", "--run-id", "r-read", *cfg)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "report: done" in result.stdout
    assert "absorbance of plate_1 at 600" in result.stdout  # the reading's table
    world = world_of(lab_file)
    assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(100)
    assert world.well("plate_1", "A1")["contents"] == {"dye": pytest.approx(100)}
    # The plan moved the plate to the reader (and the reading above came from there).
    assert {"pick_plate", "place_plate"} <= {op["op"] for op in world.physical_ops()}

    events = labwright("events", "r-read", *cfg)
    assert events.returncode == 0
    assert "transfer" in events.stdout and "read_absorbance" in events.stdout

    audit = labwright("audit", "r-read", "--verify", *cfg)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_a_sequential_run_is_shown_and_run_one_step_after_another(lab_file: Path) -> None:
    cfg = ("-c", str(lab_file))
    result = labwright("run", READ_REQUEST, "--sequential", "--yes", "--run-id", "r-seq", *cfg)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "one step after another (asked for)" in " ".join(result.stdout.split())
    # The instruments' ledgers: each action started after the one before it had finished.
    conn = sqlite3.connect(load(lab_file).db_path)
    rows = conn.execute("SELECT started_at, finished_at FROM actions ORDER BY started_at")
    times = rows.fetchall()
    conn.close()
    assert len(times) == 5
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(times))
    assert world_of(lab_file).well("plate_1", "A1")["volume_ul"] == pytest.approx(100)


def test_a_request_needing_a_clarification_exits_4_and_moves_nothing(lab_file: Path) -> None:
    result = labwright("run", "add some buffer to plate_1 A1", "--yes", "-c", str(lab_file))

    assert result.returncode == 4, result.stdout + result.stderr
    assert "clarification" in result.stdout
    assert moved(lab_file) == 0
    no_traceback(result)


def test_an_impossible_request_is_refused_with_exit_4(lab_file: Path) -> None:
    request = "shake plate_1 at 500 C for 1 min at 600 rpm"
    result = labwright("run", request, "--yes", "-c", str(lab_file))

    assert result.returncode == 4, result.stdout + result.stderr
    assert "refus" in result.stdout.lower()
    assert moved(lab_file) == 0
    no_traceback(result)


def test_a_detached_run_waits_then_is_shown_listed_and_approved(lab_file: Path) -> None:
    cfg = ("-c", str(lab_file))
    detached = labwright("run", ADD_REQUEST, "--detach", "--run-id", "r-wait", *cfg)
    assert detached.returncode == 3, detached.stdout + detached.stderr
    assert moved(lab_file) == 0

    listed = labwright("runs", *cfg)
    assert listed.returncode == 0
    row = next(line for line in listed.stdout.splitlines() if "r-wait" in line)
    assert "waiting_approval" in row

    shown = labwright("show", "r-wait", *cfg)
    assert shown.returncode == 0
    assert "plan" in shown.stdout and "transfer" in shown.stdout and "plate_2" in shown.stdout

    approved = labwright("approve", "r-wait", *cfg)
    assert approved.returncode == 0, approved.stdout + approved.stderr
    world = world_of(lab_file)
    assert world.well("plate_2", "A1")["volume_ul"] == pytest.approx(50)
    assert world.well("plate_2", "A1")["contents"] == {"buffer": pytest.approx(50)}


def test_a_rejected_run_exits_4_and_moves_nothing(lab_file: Path) -> None:
    cfg = ("-c", str(lab_file))
    detached = labwright("run", ADD_REQUEST, "--detach", "--run-id", "r-no", *cfg)
    assert detached.returncode == 3, detached.stdout + detached.stderr

    rejected = labwright("reject", "r-no", "--reason", "x", *cfg)
    assert rejected.returncode == 4, rejected.stdout + rejected.stderr
    assert moved(lab_file) == 0
    listed = labwright("runs", *cfg)
    row = next(line for line in listed.stdout.splitlines() if "r-no" in line)
    assert "cancelled" in row


def test_an_empty_request_and_an_unknown_run_exit_2_without_a_traceback(lab_file: Path) -> None:
    cfg = ("-c", str(lab_file))
    results = [
        labwright("run", "   ", "--yes", *cfg),
        labwright("show", "no-such-run", *cfg),
        labwright("approve", "no-such-run", *cfg),
        labwright("events", "no-such-run", *cfg),
    ]
    for result in results:
        assert result.returncode == 2, result.args
        no_traceback(result)
    assert moved(lab_file) == 0
