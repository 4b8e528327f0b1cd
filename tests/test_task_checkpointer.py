"""The task graph's SQLite checkpointer never holds the database's write lock while the event
loop runs other work: parallel branches write the run records and the audit log with
synchronous SQLite on the same file, from the event loop's thread."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import aiosqlite
import anyio
import pytest
from langgraph.checkpoint.base import empty_checkpoint

from agents.task.checkpointer import CompactSqliteSaver

pytestmark = pytest.mark.anyio


def config(thread: str) -> dict[str, dict[str, str]]:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}


async def test_a_synchronous_writer_in_the_event_loop_never_waits_for_a_checkpoint_commit(
    tmp_path: Path,
) -> None:
    db = tmp_path / "lab.sqlite"
    other = sqlite3.connect(db, isolation_level=None, timeout=0.5)  # the run records' own
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("CREATE TABLE IF NOT EXISTS records (n INTEGER)")
    async with aiosqlite.connect(str(db)) as conn:
        saver = CompactSqliteSaver(conn)
        stored = await saver.aput(config("t"), empty_checkpoint(), {}, {})

        async def checkpoints() -> None:
            for i in range(40):
                await saver.aput_writes(stored, [("lanes", {"lh1": i}), ("x", i)], f"task-{i}")

        async def records() -> None:
            for i in range(40):
                await asyncio.sleep(0)  # between the saver's awaits
                # Blocks the event loop while it waits for the lock, as the run records do;
                # a saver holding the lock across an await would never let go of it.
                other.execute("BEGIN IMMEDIATE")
                other.execute("INSERT INTO records VALUES (?)", (i,))
                other.execute("COMMIT")

        with anyio.fail_after(30):
            await asyncio.gather(checkpoints(), records())
        tup = await saver.aget_tuple(stored)
        assert tup is not None and len(tup.pending_writes or []) == 80
    assert other.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 40
    other.close()
