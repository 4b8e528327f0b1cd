"""The task graph's SQLite checkpointer, with channel versions a third of LangGraph's size.

A checkpoint lists every channel's version twice (``channel_versions`` and each node's
``versions_seen``); ``AsyncSqliteSaver`` writes each as 32 digits, a dot and a random float
(about 53 characters), which is most of a small checkpoint. Here a version is 12 digits, a dot
and 6 hex digits: still increasing in string order (fixed width) and across the old form (the
old form has 20 more leading zeros, so any new version sorts after it), still unique enough
across forks of a thread. Nothing else changes.
"""

from __future__ import annotations

import random

from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver


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
