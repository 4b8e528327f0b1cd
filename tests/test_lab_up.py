"""`labwright lab up | down | status` and attaching to the lab's long-lived servers.

Real processes on a one-instrument lab in a temp dir: `lab up` starts the server in the
background on 127.0.0.1 with a generated token, `run` attaches to it (the run's work is done
by that process: the world changes while no other server is started), a changed lab file is
refused with one line, `lab down` stops it.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import anyio
import httpx
import pytest
from conftest import ROOT, labwright, write_lab

from agents.device.agent import structured
from agents.mcp_client import LabServersStale, attached, client_for, connections
from device_servers.lab import load
from device_servers.sim.world import SimWorld
from state_store.lab_servers import LabServers, is_running

sys.path.insert(0, str(ROOT / "bench"))
import crash_harness as harness

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


def test_lab_up_serves_in_the_background_run_attaches_and_lab_down_stops_it(
    tmp_path: Path,
) -> None:
    lab_file = write_lab(tmp_path)
    lab = load(lab_file)
    up = labwright("lab", "up", "-c", str(lab_file))
    assert up.returncode == 0, up.stderr
    try:
        [record] = LabServers(lab.state_path).all()
        assert record.instrument == "lh1" and record.host == "127.0.0.1"
        assert is_running(record) and len(record.token) >= 24
        assert (lab.state_path / "lab-servers").stat().st_mode & 0o777 == 0o700
        assert (lab.state_path / "lab-servers" / "lh1.json").stat().st_mode & 0o777 == 0o600
        assert "lh1        up  pid" in labwright("lab", "status", "-c", str(lab_file)).stdout
        again = labwright("lab", "up", "-c", str(lab_file))
        assert "already up" in again.stdout and LabServers(lab.state_path).all() == [record]

        # The runner connects to it over HTTP with its token, not to a new stdio process.
        conn = connections(list(lab.instruments), lab_file, state_dir=lab.state_path)["lh1"]
        assert conn == {
            "transport": "streamable_http",
            "url": record.url,
            "headers": {"Authorization": f"Bearer {record.token}"},
        }
        run = labwright("run", "add 50 uL of dye to plate_1 A2", "--yes", "-c", str(lab_file))
        assert run.returncode == 0, run.stdout + run.stderr
        world = SimWorld(lab.world_path)
        assert world.well("plate_1", "A2")["volume_ul"] == pytest.approx(50.0)
        world.close()
        assert is_running(record)  # the run ended; the lab's server goes on
    finally:
        down = labwright("lab", "down", "-c", str(lab_file))
    assert down.returncode == 0 and "stopped" in down.stdout
    assert not is_running(record) and LabServers(lab.state_path).all() == []
    assert "not started" in labwright("lab", "status", "-c", str(lab_file)).stdout
    # Nothing up: the runner starts its own stdio server again.
    assert (
        connections(list(lab.instruments), lab_file, state_dir=lab.state_path)["lh1"]["transport"]
        == "stdio"
    )


async def test_the_lab_server_needs_its_token_and_an_older_lab_file_is_not_attached(
    tmp_path: Path,
) -> None:
    lab_file = write_lab(tmp_path)
    lab = load(lab_file)
    assert labwright("lab", "up", "-c", str(lab_file)).returncode == 0
    try:
        client = client_for(list(lab.instruments), lab_file, state_dir=lab.state_path)
        with anyio.fail_after(30):
            async with client.session("lh1") as session:
                state = structured(await session.call_tool("get_state", {}))
        assert state["ok"] is True and state["state"]["kind"] == "liquid_handler"
        [record] = LabServers(lab.state_path).all()
        async with httpx.AsyncClient() as http:
            refused = await http.post(record.url, json={}, headers={"Accept": "application/json"})
        assert refused.status_code == 401

        lab_file.write_text(lab_file.read_text() + "# a changed lab file\n")
        with pytest.raises(LabServersStale):
            attached(list(lab.instruments), lab_file, lab.state_path)
        status = labwright("lab", "status", "-c", str(lab_file))
        assert "lh1        stale" in status.stdout
        run = labwright("run", "add 50 uL of dye to plate_1 A2", "--yes", "-c", str(lab_file))
        assert run.returncode == 2 and "lab down" in run.stderr and "Traceback" not in run.stderr
    finally:
        assert labwright("lab", "down", "-c", str(lab_file)).returncode == 0


def test_lab_down_with_nothing_up_says_so(tmp_path: Path) -> None:
    lab_file = write_lab(tmp_path)
    down = labwright("lab", "down", "-c", str(lab_file))
    assert down.returncode == 0 and "nothing to stop" in down.stdout


def _finished_actions(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        sql = "SELECT action_id FROM actions WHERE finished_at IS NOT NULL ORDER BY started_at"
        return [r[0] for r in conn.execute(sql)]
    except sqlite3.OperationalError:  # the server has not made its tables yet
        return []
    finally:
        conn.close()


def test_a_run_killed_mid_way_resumes_on_the_lab_servers_through_labwright_resume(
    tmp_path: Path,
) -> None:
    # The liquid handler alone, 20 ms per operation: a serial dilution of 16 steps.
    lab_file = harness.write_lab(tmp_path, delay_s=0.02)
    lab = load(lab_file)
    assert labwright("lab", "up", "-c", str(lab_file)).returncode == 0
    try:
        [record] = LabServers(lab.state_path).all()
        run = harness.labwright_argv(
            "run", harness.QUICK_REQUEST, "--yes", "--run-id", "r1", "-c", str(lab_file)
        )
        # kill -9 of the task process once three actions are done on the lab's server.
        killed = harness.run_segment(
            run, None, True, kill_when=lambda: len(_finished_actions(lab.db_path)) >= 3
        )
        assert killed.killed and is_running(record)
        before = _finished_actions(lab.db_path)

        resumed = labwright("resume", "r1", "-c", str(lab_file), timeout=300)
        # The lab's server holds lh1's serve lock: a resume that started a server of its own
        # instead of attaching would have been refused (exit 2), not done.
        assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
        status = labwright("runs", "-c", str(lab_file)).stdout
        assert "r1" in status and "done" in status
        after = _finished_actions(lab.db_path)
        assert after[: len(before)] == before and len(after) > len(before)
        assert len(after) == len(set(after))  # no action carried out twice
        assert is_running(record) and LabServers(lab.state_path).all() == [record]
    finally:
        assert labwright("lab", "down", "-c", str(lab_file)).returncode == 0


def test_a_run_whose_instrument_is_served_elsewhere_says_so_in_one_line(tmp_path: Path) -> None:
    # lh1 is served by a process that is not the lab's (`labwright serve` by hand): the run's
    # own server is refused by the serve lock, and the run stops with lines, not a traceback.
    from _servers import HttpServer

    lab_file = harness.write_lab(tmp_path, delay_s=0.0)
    server = HttpServer(lab_file, tmp_path / "server.log")
    try:
        server.wait_ready()
        run = labwright("run", harness.QUICK_REQUEST, "--yes", "-c", str(lab_file), timeout=120)
        assert run.returncode == 2, run.stdout[-2000:] + run.stderr[-2000:]
        assert "Traceback" not in run.stdout + run.stderr
        last = run.stderr.strip().splitlines()[-1]
        assert last.startswith("error: lh1:") and len(run.stderr.strip().splitlines()) <= 3
        assert server.proc.poll() is None  # the other server was left alone
    finally:
        server.stop()
