"""Live events of this process, fanned out to server-sent-event subscribers.

The runner's progress lines (a step dispatched, a retry, an in-doubt action resolved) and the
operations' own notices (a run being driven, settled, an e-stop) arrive here; each subscriber
has a bounded queue, and one that falls behind loses the oldest events, never blocks a run.
What is durable (status, audit entries) a subscriber re-reads from the records; these events
only say *when* to look.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from typing import Any

QUEUE = 256


class Hub:
    def __init__(self) -> None:
        self._subscribers: set[asyncio.Queue[dict[str, Any]]] = set()
        self.current: str | None = None  # the run being driven (one at a time)

    def progress(self, what: str, data: dict[str, Any]) -> None:
        """The runner's progress callback: tagged with the run being driven."""
        self.publish({"what": what, "run_id": self.current, **data})

    def notice(self, what: str, data: dict[str, Any]) -> None:
        """The operations' listener: who is driven now, and when it settles."""
        if what == "driving":
            self.current = data.get("run_id")
        elif what == "settled" and self.current == data.get("run_id"):
            self.current = None
        self.publish({"what": what, **data})

    def publish(self, event: dict[str, Any]) -> None:
        event = {"ts": time.time(), **event}
        for queue in list(self._subscribers):
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)

    @contextlib.contextmanager
    def subscribe(self) -> Iterator[asyncio.Queue[dict[str, Any]]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE)
        self._subscribers.add(queue)
        try:
            yield queue
        finally:
            self._subscribers.discard(queue)
