"""``labwright serve <instrument>``: one instrument as an MCP server, started lean.

Every server a run, ``labwright lab up`` or a person starts comes through here. It imports
what serving needs and nothing of the command line (no typer or rich, no task agent, no MCP
client): the options are read with argparse, errors are one line on stderr (exit 2). The
typer command ``labwright serve`` forwards its arguments here, so the options exist once;
``python -m labwright serve`` does not load the CLI at all.

One server per instrument and state directory: a server holds an exclusive lock on
``<state>/<lab>.<instrument>.serve.lock`` while it runs (released by the kernel when its
process ends, however it ends), so a second one -- a ``labwright serve`` by hand while the
lab's servers are up, a run starting its own while another run's are alive -- is refused
instead of driving the same instrument from a second process with a second belief of it.
A new server waits a few seconds first (``--lock-wait``): the server of a task process that
was just killed sees its stdin close and ends, and the resumed run's new server takes over
only then.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from labwright._text import one_line

if TYPE_CHECKING:
    from device_servers.contract import InstrumentBase
    from device_servers.lab import LabConfig

EXIT_BAD_INPUT = 2
LOCK_WAIT_S = 10.0


class AlreadyServed(RuntimeError):
    """Another process serves this instrument from this state directory."""


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line (``error: ...``, exit 2) like every other command's."""

    def error(self, message: str) -> NoReturn:
        _fail(f"{message} (see `labwright serve --help`)")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="labwright serve", description="Serve one instrument as an MCP server.")
    p.add_argument("instrument", help="Instrument id from the lab file.")
    p.add_argument(
        "--config",
        "-c",
        type=Path,
        help="Lab file (default: $LABWRIGHT_CONFIG, ./lab.yaml, ./examples/lab.yaml).",
    )
    p.add_argument("--transport", default="stdio", help="stdio or http.")
    p.add_argument("--host", default="127.0.0.1", help="HTTP bind address.")
    p.add_argument("--port", type=_port, default=8765, help="HTTP port (1-65535).")
    p.add_argument(
        "--token",
        default=os.environ.get("LABWRIGHT_TOKEN"),
        help="Bearer token required over HTTP (default: $LABWRIGHT_TOKEN).",
    )
    p.add_argument(
        "--allow-origin", action="append", default=[], help="Extra allowed Origin (HTTP)."
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        help="Extra allowed Host name (HTTP), e.g. the name clients use for 0.0.0.0.",
    )
    p.add_argument("--tls-cert", type=Path, help="TLS certificate file (PEM) for HTTPS.")
    p.add_argument("--tls-key", type=Path, help="TLS private key file (PEM) for HTTPS.")
    p.add_argument(
        "--lock-wait",
        type=float,
        default=LOCK_WAIT_S,
        metavar="SECONDS",
        help="How long to wait for another server of this instrument to end (default "
        f"{LOCK_WAIT_S:.0f}).",
    )
    return p


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port (1-65535)")
    return port


def _fail(message: str) -> NoReturn:
    """One error line on stderr (the message may echo what a person typed)."""
    print(f"error: {one_line(message)}", file=sys.stderr)
    raise SystemExit(EXIT_BAD_INPUT)


def _holder(fd: int) -> str:
    return os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"


def _take(fd: int, instrument: str, wait_s: float) -> bool:
    deadline = time.monotonic() + wait_s
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            if not told:
                print(
                    f"{instrument}: waiting up to {wait_s:.0f} s for process {_holder(fd)} "
                    "to stop serving it",
                    file=sys.stderr,
                    flush=True,
                )
                told = True
            time.sleep(0.05)


@contextlib.contextmanager
def serving(
    state_dir: Path, lab: str, instrument: str, wait_s: float = LOCK_WAIT_S
) -> Iterator[None]:
    """Hold this instrument's serve lock while the block runs (waiting up to ``wait_s`` for
    a server that is ending to let it go).

    Raises:
        AlreadyServed: another live process still holds it.
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / f"{lab}.{instrument}.serve.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if not _take(fd, instrument, wait_s):
            raise AlreadyServed(
                f"{instrument} is already served from {state_dir} by process {_holder(fd)} "
                "(one server per instrument: attach to it, or stop it first -- "
                "`labwright lab down` for the lab's servers)"
            )
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    from device_servers.errors import ConfigurationError
    from device_servers.lab import ConfigError, load
    from device_servers.transport import TransportRefused
    from policies import PolicyError

    if args.transport not in ("stdio", "http"):
        _fail(f"--transport must be stdio or http, not {args.transport!r}")
    try:
        lab = load(args.config)
        inst = lab.instrument(args.instrument)
    except ConfigError as exc:
        _fail(str(exc))
    try:
        with serving(lab.state_path, lab.lab, inst.id, max(0.0, args.lock_wait)):
            _serve(lab, inst, args)
    except (AlreadyServed, TransportRefused) as exc:
        _fail(str(exc))
    except (ConfigurationError, PolicyError) as exc:
        index = next(i for i, x in enumerate(lab.instruments) if x.id == inst.id)
        _fail(f"{lab.source}: instruments[{index}] ({inst.id}): {exc}")
    except KeyboardInterrupt:
        pass
    return 0


def _serve(lab: LabConfig, inst: InstrumentBase, args: argparse.Namespace) -> None:
    from device_servers.transport import serve_http, serve_stdio

    if args.transport == "stdio":
        import asyncio

        asyncio.run(serve_stdio(inst, lab.db_path, lab.world_path))
    else:
        serve_http(
            inst,
            lab.db_path,
            lab.world_path,
            host=args.host,
            port=args.port,
            token=args.token,
            allowed_origins=args.allow_origin,
            allowed_hosts=args.allow_host,
            tls_cert=args.tls_cert,
            tls_key=args.tls_key,
        )
