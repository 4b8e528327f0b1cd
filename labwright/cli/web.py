"""``labwright web``: the HTTP API and the approval page, next to the lab's task runner.

Binds 127.0.0.1 unless told otherwise (a warning for anything else: every request still
needs a token). ``--demo`` starts on a fresh simulated lab (a temporary state directory),
makes an approver and prints their token, and leaves one run waiting for approval.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import tempfile
from pathlib import Path
from typing import Any

import typer

from device_servers.geometry_cache import default_cache_dir
from device_servers.lab import LabConfig
from labwright.cli._common import ConfigOpt, err, fail, lab_of, out

DEMO_REQUEST = (
    "make a 2-fold serial dilution of dye across row A of plate_1, 100 uL final volume, "
    "then shake plate_1 at 37 C for 5 min at 600 rpm, then read absorbance at 600 nm"
)


def web(
    config: Path | None = ConfigOpt,
    host: str = typer.Option("127.0.0.1", help="Address to bind (loopback by default)."),
    port: int = typer.Option(8600, min=0, max=65535, help="Port (0: any free port)."),
    model: str | None = typer.Option(None, help="provider:name of a chat model to plan with."),
    allow_host: list[str] = typer.Option(
        [], "--allow-host", help="Another Host header name to accept (behind a proxy)."
    ),
    demo: bool = typer.Option(
        False, "--demo", help="A fresh simulated lab, an approver's token and a waiting run."
    ),
) -> None:
    """Serve the HTTP API for runs and the approval page."""
    if demo:
        state = Path(tempfile.mkdtemp(prefix="labwright-web-demo-"))
        os.environ["LABWRIGHT_STATE_DIR"] = str(state)
    lab = lab_of(config)
    if not _loopback(host):
        err.print(
            f"[yellow]warning:[/] serving on {host}: anyone who can reach it can try tokens; "
            "put it behind TLS",
            highlight=False,
        )
    hosts = sorted({"127.0.0.1", "localhost", host, *allow_host})
    try:
        asyncio.run(_serve(lab, host, port, model, hosts, demo))
    except OSError as exc:
        fail(f"cannot serve on {host}:{port}: {exc.strerror or exc}")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


async def _serve(
    lab: LabConfig, host: str, port: int, model: str | None, hosts: list[str], demo: bool
) -> None:
    import uvicorn

    from agents.task.planning import make_planner
    from labwright.identity import people_for
    from labwright.lab_runner import runner_for
    from labwright.operations import Operations
    from labwright.web import create_app
    from labwright.web.hub import Hub
    from labwright.web.model import lab_geometry

    hub = Hub()
    runner = runner_for(lab, make_planner(model), model=model, progress=hub.progress)
    async with runner:
        people = people_for(lab, runner.conn)
        ops = Operations(runner, people, background=True)
        ops.listeners.append(hub.notice)
        app = create_app(
            ops, hub, lab_geometry(lab, default_cache_dir()), lab_name=lab.lab, allowed_hosts=hosts
        )
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host=host,
                port=port,
                log_level="warning",
                lifespan="off",
                timeout_graceful_shutdown=2,  # live streams end; runs resume from checkpoints
            )
        )
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.05)  # uvicorn has no "started" event to wait on
        if task.done():
            await task  # it failed to bind: the OSError says why
        bound = server.servers[0].sockets[0].getsockname()[1]
        url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{bound}/"
        if demo:
            await _demo(ops, people, url, lab)
        out.print(
            f"Labwright web for {lab.lab}: {url}  (state in {lab.state_path})", highlight=False
        )
        print(f"listening on {url}", flush=True)
        try:
            await task
        finally:
            await ops.shutdown()  # a run cut short resumes from its checkpoints


async def _demo(ops: Any, people: Any, url: str, lab: LabConfig) -> None:
    """An approver with a fresh token, and the demo request planned and waiting for them."""
    from state_store.people import UnknownPerson

    try:
        token = people.rotate("demo-approver")
    except UnknownPerson:
        token = people.add("demo-approver", "approver")
    me = people.authenticate(token)
    started = await ops.create(me, DEMO_REQUEST)
    out.rule("Labwright web demo (simulated lab)")
    out.print(f"open {url}runs/{started['run_id']} and sign in with the token below")
    print(f"approver token: {token}", flush=True)
