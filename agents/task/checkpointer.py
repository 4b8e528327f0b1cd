"""The task graph's SQLite checkpointer, with channel versions a third of LangGraph's size.

A checkpoint lists every channel's version twice (``channel_versions`` and each node's
``versions_seen``); ``AsyncSqliteSaver`` writes each as 32 digits, a dot and a random float
(about 53 characters), which is most of a small checkpoint. Here a version is 12 digits, a dot
and 6 hex digits: still increasing in string order (fixed width) and across the old form (the
old form has 20 more leading zeros, so any new version sorts after it), still unique enough
across forks of a thread.

Writes are one transaction each inside the connection's own thread. ``AsyncSqliteSaver``
inserts, awaits, then commits: between the two its connection holds the database's write lock
while the event loop runs other branches of the superstep, and a branch writing the run records
or the audit log (synchronous SQLite on the same file) then waits in the event loop's thread
for a commit that needs the event loop: a deadlock until the busy timeout ("database is
locked"). With steps on several instruments at the same time this happened under load.
"""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

_PUT = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, "
    "parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_WRITES = (
    "INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, "
    "type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class CompactSqliteSaver(AsyncSqliteSaver):
    """``AsyncSqliteSaver`` with short channel versions."""

    def get_next_version(self, current: str | None, channel: None) -> str:
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(current.split(".")[0])
        return f"{number + 1:012}.{random.getrandbits(24):06x}"

    async def _in_one_transaction(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """``sql`` for every row, committed, all in the connection's thread (no lock held
        while the event loop runs anything else)."""

        def write(conn: sqlite3.Connection) -> None:
            with conn:  # commits, or rolls back on an error
                conn.executemany(sql, rows)

        await self.setup()
        async with self.lock:
            # aiosqlite runs a function in its connection's thread only through _execute.
            await self.conn._execute(write, self.conn._conn)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        conf = config["configurable"]
        type_, blob = self.serde.dumps_typed(checkpoint)
        meta = json.dumps(get_checkpoint_metadata(config, metadata), ensure_ascii=False)
        row = (
            str(conf["thread_id"]),
            conf["checkpoint_ns"],
            checkpoint["id"],
            conf.get("checkpoint_id"),
            type_,
            blob,
            meta.encode("utf-8", "ignore"),
        )
        await self._in_one_transaction(_PUT, [row])
        return {
            "configurable": {
                "thread_id": conf["thread_id"],
                "checkpoint_ns": conf["checkpoint_ns"],
                "checkpoint_id": checkpoint["id"],
            }
        }

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        conf = config["configurable"]
        verb = "REPLACE" if all(w[0] in WRITES_IDX_MAP for w in writes) else "IGNORE"
        rows = [
            (
                str(conf["thread_id"]),
                str(conf["checkpoint_ns"]),
                str(conf["checkpoint_id"]),
                task_id,
                task_path,
                WRITES_IDX_MAP.get(channel, idx),
                channel,
                *self.serde.dumps_typed(value),
            )
            for idx, (channel, value) in enumerate(writes)
        ]
        await self._in_one_transaction(f"INSERT OR {verb} {_WRITES}", rows)
