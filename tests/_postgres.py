"""A real PostgreSQL server for the test session, in a temporary directory (initdb + pg_ctl
from Debian's PostgreSQL 15 packages), and a fresh database per test. As root the server runs
as the ``postgres`` user (initdb refuses root). Without the packages the tests that need it
skip with a message saying how to install them."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

PG_BIN = Path("/usr/lib/postgresql/15/bin")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user() -> list[str]:
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


@contextmanager
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server that lives as long as the block."""
    if not (PG_BIN / "initdb").exists():
        pytest.skip(
            "PostgreSQL 15 is not installed: `apt-get install postgresql` (make test does it as "
            "root)"
        )
    base = Path(tempfile.mkdtemp(prefix="labwright-pg-"))
    if os.geteuid() == 0:
        shutil.chown(base, "postgres", "postgres")
    data, log, port = base / "data", base / "server.log", _free_port()
    run = _as_server_user()
    try:
        subprocess.run(
            [*run, str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "labwright",
             "-E", "UTF8", "--no-sync"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [*run, str(PG_BIN / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log),
             "-w", "-t", "60", "start"],
            check=True, capture_output=True, timeout=90,
        )  # fmt: skip
        try:
            yield f"postgresql://labwright@127.0.0.1:{port}/postgres"
        finally:
            subprocess.run(
                [*run, str(PG_BIN / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                capture_output=True, timeout=60,
            )  # fmt: skip
    finally:
        shutil.rmtree(base, ignore_errors=True)


def fresh_database(server_url: str) -> str:
    """A new, empty database on the server; its URL."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # a generated identifier
    return server_url.rsplit("/", 1)[0] + f"/{name}"
