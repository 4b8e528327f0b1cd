"""The task graph served by LangGraph's own server (``langgraph dev``, in memory, offline,
telemetry off) from the repository's ``langgraph.json``: a run started through LangGraph's
HTTP API stops at the approval interrupt (Agent Inbox shape) and resumes with a decision; the
lab's people decide who may. Outcomes are judged from the simulated world."""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from _web import web_lab_file
from conftest import ROOT

from device_servers.lab import load
from device_servers.sim.world import SimWorld
from labwright.identity import people_for

pytestmark = pytest.mark.slow

LANGGRAPH = Path(sys.executable).parent / "langgraph"
REQUEST = "add 50 uL of buffer to plate_2 A1:A3"


@dataclass
class Served:
    url: str
    lab_file: Path
    tokens: dict[str, str]

    def client(self, role: str | None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[role]}"} if role else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=120.0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    lab_file = web_lab_file(tmp_path_factory.mktemp("langgraph"))
    people = people_for(load(lab_file))
    tokens = {role: people.add(f"lg-{role}", role) for role in ("approver", "operator", "viewer")}
    port = _free_port()
    env = {
        **os.environ,
        "LABWRIGHT_CONFIG": str(lab_file),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGSMITH_TRACING": "false",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("LABWRIGHT_STATE_DIR", None)
    # The server keeps its in-memory state in .langgraph_api/ of its working directory.
    work = tmp_path_factory.mktemp("langgraph-work")
    proc = subprocess.Popen(
        [str(LANGGRAPH), "dev", "--port", str(port), "--no-browser", "--no-reload",
         "--allow-blocking", "--config", str(ROOT / "langgraph.json")],
        cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    seen: list[str] = []
    deadline = time.monotonic() + 120
    try:
        while not any("Application started" in x for x in seen):
            try:
                seen.append(lines.get(timeout=0.5))
            except queue.Empty:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("langgraph dev did not start:\n" + "".join(seen)) from None
        yield Served(f"http://127.0.0.1:{port}", lab_file, tokens)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def start(http: httpx.Client, request: str = REQUEST) -> tuple[str, dict[str, Any]]:
    thread = http.post("/threads", json={}).json()["thread_id"]
    first = {"run_id": thread, "request": request, "observations": [], "deviations": []}
    reply = http.post(
        f"/threads/{thread}/runs/wait", json={"assistant_id": "labwright", "input": first}
    )
    assert reply.status_code == 200, reply.text
    return thread, reply.json()


def resume(http: httpx.Client, thread: str, answer: Any) -> dict[str, Any]:
    reply = http.post(
        f"/threads/{thread}/runs/wait",
        json={"assistant_id": "labwright", "command": {"resume": answer}},
    )
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def test_a_run_through_langgraph_s_api_stops_for_approval_and_completes_when_accepted(
    server: Served,
) -> None:
    with server.client("approver") as http:
        thread, waiting = start(http)
        (question,) = waiting["__interrupt__"]
        asked = question["value"]
        assert asked["kind"] == "approval" and asked["action_request"]["action"] == "approve_plan"
        assert asked["action_request"]["args"]["basis"] == asked["basis"]
        assert set(asked["config"]) == {
            "allow_accept",
            "allow_ignore",
            "allow_edit",
            "allow_respond",
        }
        assert "transfer" in asked["description"]
        world = SimWorld(load(server.lab_file).world_path)
        try:
            assert world.physical_ops() == []  # nothing moved before the approval
            done = resume(http, thread, [{"type": "accept", "args": asked["action_request"]}])
            assert done["status"] == "done" and "__interrupt__" not in done
            assert done["approval"]["record"]["by"] == "lg-approver"
            assert done["approval"]["record"]["via"] == "langgraph"
            volumes = [world.well("plate_2", w)["volume_ul"] for w in ("A1", "A2", "A3")]
            assert volumes == pytest.approx([50.0, 50.0, 50.0])
        finally:
            world.close()


def test_ignore_in_the_inbox_rejects_the_plan_and_moves_nothing(server: Served) -> None:
    with server.client("operator") as http:
        thread, _ = start(http, "add 25 uL of buffer to plate_2 B1")
        done = resume(http, thread, [{"type": "ignore", "args": None}])
    assert done["status"] == "rejected" and "__interrupt__" not in done


def test_an_operator_s_accept_is_void_and_the_run_asks_again(server: Served) -> None:
    with server.client("operator") as http:
        thread, waiting = start(http, "add 25 uL of buffer to plate_2 C1")
        asked = waiting["__interrupt__"][0]["value"]
        again = resume(http, thread, [{"type": "accept", "args": asked["action_request"]}])
    (question,) = again["__interrupt__"]
    assert question["value"]["kind"] == "approval"
    assert question["value"]["voided"]["changed"] == ["signature"]


def test_without_a_token_or_as_a_viewer_nothing_starts(server: Served) -> None:
    with server.client(None) as anonymous:
        assert anonymous.post("/threads", json={}).status_code == 401
    with server.client("viewer") as viewer:
        assert viewer.post("/threads", json={}).status_code == 403
