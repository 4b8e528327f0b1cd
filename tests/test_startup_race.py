"""Servers started together on a fresh state directory all come up (the small form of
``make bench-startup``: ``bench/startup_race.py``, 200 trials)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
from conftest import ROOT

from state_store import db

pytestmark = pytest.mark.slow


def test_eight_servers_started_at_once_on_a_fresh_state_dir_all_answer() -> None:
    proc = subprocess.run(
        [sys.executable, "bench/startup_race.py", "--trials", "2", "--servers", "8"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 of 2 trials passed" in proc.stdout


def test_a_busy_error_that_skipped_the_busy_handler_is_retried() -> None:
    attempts: list[int] = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise sqlite3.OperationalError("database is locked")
        return "done"

    assert db.retry_busy(flaky, pause_s=0) == "done"
    assert len(attempts) == 3


def test_other_database_errors_are_not_retried() -> None:
    attempts: list[int] = []

    def broken() -> None:
        attempts.append(1)
        raise sqlite3.OperationalError("no such table: nowhere")

    with pytest.raises(sqlite3.OperationalError):
        db.retry_busy(broken, pause_s=0)
    assert len(attempts) == 1
