"""state_store.db: what a server looks up on every call searches an index, never scans.

The statements are the ledger's own, captured as it runs them (``set_trace_callback``), and
asked of SQLite's planner: a scan would cost more with every action the instrument ever
carried out (a long run's per-step time grew 1.8x over 10,000 steps that way).
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

from state_store import connect
from state_store.ledger import Ledger


def plans_of(conn: sqlite3.Connection, work: Callable[[], object]) -> dict[str, str]:
    """Each statement ``work`` runs, with SQLite's query plan for it."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        work()
    finally:
        conn.set_trace_callback(None)
    return {
        sql: " / ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
        for sql in seen
        if sql.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE"))
    }


def test_the_ledger_finds_actions_in_doubt_and_resume_points_through_an_index(
    tmp_path: Path,
) -> None:
    conn = connect(tmp_path / "lab.sqlite")
    ledger = Ledger(conn, "lh1")
    for i in range(50):
        ledger.begin(f"run-1/s{i}/cmd", "cmd", "digest", {}, run_id="run-1")
        ledger.progress(f"run-1/s{i}/cmd", 1)
        ledger.finish(f"run-1/s{i}/cmd", "done", {"ok": True})

    plans = plans_of(
        conn,
        lambda: (
            ledger.in_doubt(),
            ledger.mark_pending_in_doubt(),
            ledger.clear_resume_points(),
            ledger.get("run-1/s7/cmd"),
            ledger.finish("run-1/s7/cmd", "done", {"ok": True}),
        ),
    )
    assert len(plans) >= 5
    assert {sql: plan for sql, plan in plans.items() if reads_every_action(plan)} == {}


def reads_every_action(plan: str) -> bool:
    """A scan, or a search of the primary key by its instrument prefix alone: both read every
    action the instrument ever carried out."""
    return any(
        part.startswith("SCAN") or re.search(r"sqlite_autoindex_\w+ \(instrument=\?\)$", part)
        for part in plan.split(" / ")
    )
