"""The task runs table: what ``labwright runs`` lists, separate from device runs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from state_store import DeviceRuns, TaskRuns, connect
from state_store import task_runs as task_runs_module


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "lab.sqlite"


@pytest.fixture
def runs(db: Path) -> TaskRuns:
    return TaskRuns(connect(db))


def test_a_new_run_is_planning_and_reads_back_as_created(runs: TaskRuns) -> None:
    run = runs.create("read plate_1 at 600 nm", planner="rule", model=None)
    assert run.status == "planning"
    assert run.run_id.startswith("run-")
    assert runs.get(run.run_id) == run


def test_made_up_run_ids_differ_and_a_given_id_cannot_be_reused(runs: TaskRuns) -> None:
    assert runs.create("a").run_id != runs.create("a").run_id
    runs.create("b", run_id="r1")
    with pytest.raises(sqlite3.IntegrityError):
        runs.create("c", run_id="r1")


def test_an_unknown_run_reads_as_none(runs: TaskRuns) -> None:
    assert runs.get("nope") is None


def test_update_stores_plan_report_and_error_as_json_and_survives_reopening(
    db: Path, runs: TaskRuns
) -> None:
    runs.create("dilute", run_id="r1")
    plan = {"steps": [{"instrument": "lh1", "command": "aspirate", "args": {"volume_ul": 50}}]}
    updated = runs.update(
        "r1", status="waiting_approval", plan=plan, summary="1 step", model="fake:m"
    )
    assert (updated.status, updated.plan, updated.summary) == ("waiting_approval", plan, "1 step")
    runs.update("r1", status="failed", error={"code": "NO_TIP"}, report={"readings": [0.1]})
    again = TaskRuns(connect(db)).get("r1")
    assert again is not None
    assert (again.status, again.error, again.report, again.plan, again.model) == (
        "failed",
        {"code": "NO_TIP"},
        {"readings": [0.1]},
        plan,
        "fake:m",
    )
    assert runs.update("r1", error=None).error is None


def test_update_moves_updated_at_but_not_created_at(
    runs: TaskRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(task_runs_module.time, "time", lambda: 100.0)
    runs.create("x", run_id="r1")
    monkeypatch.setattr(task_runs_module.time, "time", lambda: 250.0)
    run = runs.update("r1", status="running")
    assert (run.created_at, run.updated_at) == (100.0, 250.0)


def test_unknown_statuses_and_fields_are_refused(runs: TaskRuns) -> None:
    runs.create("x", run_id="r1")
    with pytest.raises(ValueError):
        runs.create("y", status="finished")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        runs.update("r1", status="finished")
    with pytest.raises(ValueError):
        runs.update("r1", request="something else")
    with pytest.raises(ValueError):
        runs.update("r1", **{"status=status, run_id": "x"})
    with pytest.raises(ValueError):
        runs.list(status="finished")  # type: ignore[arg-type]
    run = runs.get("r1")
    assert run is not None and (run.status, run.request) == ("planning", "x")


def test_updating_a_missing_run_raises_key_error(runs: TaskRuns) -> None:
    with pytest.raises(KeyError):
        runs.update("nope", status="done")


def test_list_is_newest_first_limited_and_filtered_by_status(
    runs: TaskRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i, status in enumerate(["done", "running", "done", "refused"]):
        monkeypatch.setattr(task_runs_module.time, "time", lambda i=i: 1000.0 + i)
        runs.create(f"request {i}", run_id=f"r{i}", status=status)  # type: ignore[arg-type]
    assert [r.run_id for r in runs.list()] == ["r3", "r2", "r1", "r0"]
    assert [r.run_id for r in runs.list(limit=2)] == ["r3", "r2"]
    assert [r.run_id for r in runs.list(status="done")] == ["r2", "r0"]
    assert runs.list(status="cancelled") == []


def test_runs_created_in_the_same_instant_list_in_reverse_creation_order(
    runs: TaskRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(task_runs_module.time, "time", lambda: 5.0)
    for run_id in ["b", "c", "a"]:
        runs.create("same instant", run_id=run_id)
    assert [r.run_id for r in runs.list()] == ["a", "c", "b"]


def test_task_runs_and_device_runs_are_separate_tables(db: Path, runs: TaskRuns) -> None:
    runs.create("x", run_id="r1")
    assert DeviceRuns(connect(db), "lh1").get("r1") is None


def test_exists_and_write_answer_without_decoding_the_run(runs: TaskRuns) -> None:
    assert not runs.exists("r1")
    runs.create("x", run_id="r1")
    assert runs.exists("r1")
    assert runs.write("r1", status="running", plan={"steps": []}) is None
    run = runs.get("r1")
    assert run is not None and (run.status, run.plan) == ("running", {"steps": []})
    with pytest.raises(KeyError):
        runs.write("nope", status="done")
    with pytest.raises(ValueError):
        runs.write("r1", request="something else")


def test_instruments_are_those_of_the_recorded_plan_read_without_decoding_it(
    runs: TaskRuns,
) -> None:
    run = runs.create("fill, then read")
    assert runs.instruments(run.run_id) == [] and runs.instruments("no-such-run") == []
    steps = [
        {"id": "s1", "instrument": "lh1", "command": "transfer", "args": {}},
        {"id": "s2", "instrument": "arm1", "command": "move_plate", "args": {}},
        {"id": "s3", "instrument": "lh1", "command": "transfer", "args": {}},
    ]
    runs.write(run.run_id, plan={"steps": steps})
    assert runs.instruments(run.run_id) == ["arm1", "lh1"]
