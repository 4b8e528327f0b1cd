"""Labwright's task-side records and LangGraph's checkpoints on a real PostgreSQL server (the
session starts one in a temporary directory): the record classes unchanged on it, one audit
chain from several connections, and a run approved in one process that resumes in another
process on another state directory sharing the database, executed once."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from _servers import http_server
from conftest import labwright, write_lab

from device_servers.lab import load
from device_servers.sim.world import SimWorld
from state_store import AuditLog, TaskRuns
from state_store.answers import PendingAnswers
from state_store.blobs import Blobs
from state_store.people import NotAuthenticated, People
from state_store.pg import PgConnection, translate
from state_store.signoff import ApprovalSigner

pytestmark = pytest.mark.slow


def test_sqlite_s_dialect_is_translated_and_nothing_else() -> None:
    assert translate("SELECT * FROM runs WHERE run_id=? AND status=?") == (
        "SELECT * FROM runs WHERE run_id=%s AND status=%s"
    )
    assert translate("INSERT OR IGNORE INTO lab_keys (name, key) VALUES (?, ?)") == (
        "INSERT INTO lab_keys (name, key) VALUES (%s, %s) ON CONFLICT DO NOTHING"
    )
    assert "DOUBLE PRECISION" in translate("CREATE TABLE t (at REAL NOT NULL)")


def test_runs_audit_people_keys_and_answers_work_unchanged_on_postgres(pg_url: str) -> None:
    conn = PgConnection(pg_url)
    runs = TaskRuns(conn)
    runs.create("add dye", run_id="r1")
    runs.create("add buffer", run_id="r2")
    with pytest.raises(sqlite3.IntegrityError):
        runs.create("again", run_id="r1")
    assert runs.update("r1", status="done", plan={"steps": [1]}).plan == {"steps": [1]}
    assert runs.instruments("r1") == [] and runs.instruments("r2") == []
    steps = [{"id": "s1", "instrument": "lh1"}, {"id": "s2", "instrument": "arm1"}]
    runs.write("r2", plan={"steps": steps})
    assert runs.instruments("r2") == ["arm1", "lh1"]
    blobs = Blobs(conn)
    ref = blobs.put("simulation", {"ok": True, "timeline": {"steps": [{"step": "s1"}]}})
    assert (
        blobs.part(ref, "timeline", "steps") == [{"step": "s1"}] and blobs.part(ref, "ok") is True
    )
    assert [r.run_id for r in runs.list()] == ["r2", "r1"]
    assert [r.run_id for r in runs.list(status="done")] == ["r1"]

    audit = AuditLog(conn)
    for i in range(3):
        audit.append(run_id="r1", agent="task", tool=f"t{i}", args={"i": i})
    assert [e.seq for e in audit.entries("r1")] == [1, 2, 3]
    assert audit.verify("r1").ok
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE audit_log SET tool='forged' WHERE seq=2")
    conn.execute("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only")
    conn.execute("UPDATE audit_log SET tool='forged' WHERE seq=2")
    assert [p.kind for p in audit.verify().problems] == ["hash_mismatch"]

    people = People(conn)
    token = people.add("alice", "approver")
    assert people.authenticate(token).role == "approver"
    with pytest.raises(NotAuthenticated):
        people.authenticate("lw_wrong")

    record = ApprovalSigner(conn).sign(
        run_id="r1", person="alice", role="approver", via="token",
        basis={"plan": "p", "simulation": "s", "policy": "r", "twins": "t"},
    )  # fmt: skip
    assert ApprovalSigner(PgConnection(pg_url)).valid(record, "r1")  # one key for every host

    answers = PendingAnswers(conn)
    answers.put("r1", {"decision": "approve"})
    assert PendingAnswers(PgConnection(pg_url)).take("r1") == {"decision": "approve"}
    assert answers.take("r1") is None  # taken once


def test_appends_from_several_connections_keep_one_unbroken_chain(pg_url: str) -> None:
    def append(n: int) -> None:
        log = AuditLog(PgConnection(pg_url))
        for i in range(15):
            log.append(run_id=f"r{n}", agent="task", tool="t", args={"i": i})

    threads = [threading.Thread(target=append, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    report = AuditLog(PgConnection(pg_url)).verify()
    assert report.ok and report.checked == 60


def _remote_lab(tmp: Path, name: str, url: str, pg_url: str) -> Path:
    """The instrument lab seen from a task host: lh1 over HTTP, records in PostgreSQL."""

    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0].update(url=url, token_env="LH1_TOKEN")
        data["state"] = {"url": pg_url}

    (tmp / name).mkdir()
    lab_file = write_lab(tmp / name, patch)
    return lab_file


async def _plan_and_approve_here(lab_file: Path, request: str, run_id: str) -> str:
    """This process: plan the run, then record the local operator's signed approval only."""
    from agents.task.planning import make_planner
    from labwright.identity import people_for
    from labwright.lab_runner import runner_for
    from labwright.operations import Operations
    from state_store import local_operator

    lab = load(lab_file)
    runner = runner_for(lab, make_planner(None))
    async with runner:
        ops = Operations(runner, people_for(lab, runner.conn))
        waiting = await ops.create(local_operator(), request, run_id)
        assert waiting.status == "waiting_approval", waiting
        recorded = await ops.approve(local_operator(), run_id, drive=False)
        return str(recorded.status)


def test_a_run_approved_in_one_process_resumes_in_another_with_another_state_dir(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    instrument_lab = write_lab(tmp_path)
    monkeypatch.setenv("LH1_TOKEN", "t0ken")
    with http_server(instrument_lab, tmp_path / "lh1.log", token="t0ken") as lh1:
        host_a = _remote_lab(tmp_path, "a", lh1.url, pg_url)
        host_b = _remote_lab(tmp_path, "b", lh1.url, pg_url)
        assert load(host_a).state_path != load(host_b).state_path
        request = "add 50 uL of dye to plate_1 A1"
        status = asyncio.run(_plan_and_approve_here(host_a, request, "r-pg"))
        assert status == "waiting_approval"  # approved and recorded, nothing executed
        world = SimWorld(load(instrument_lab).world_path)
        try:
            assert world.physical_ops() == []
            done = labwright("resume", "r-pg", "-c", str(host_b))
            assert done.returncode == 0, done.stdout + done.stderr
            assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50.0)
            assert [o["op"] for o in world.physical_ops() if o["op"] == "dispense"] == ["dispense"]
        finally:
            world.close()
    conn = PgConnection(pg_url)
    assert TaskRuns(conn).get("r-pg").status == "done"  # type: ignore[union-attr]
    tools = [(e.tool, e.agent) for e in AuditLog(conn).entries("r-pg")]
    assert any(t == "approval_confirmed" and a.startswith("person:local:") for t, a in tools)
    assert AuditLog(conn).verify("r-pg").ok
    # Host B's state directory holds no task records of its own: they are in PostgreSQL.
    b_db = load(host_b).db_path
    assert not b_db.exists() or "r-pg" not in {
        r[0] for r in sqlite3.connect(b_db).execute("SELECT run_id FROM runs").fetchall()
    }
