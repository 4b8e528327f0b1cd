"""How agents reach instruments: one MCP connection per instrument, from the lab config.

Local instruments are started as ``labwright serve <id>`` over stdio; remote ones are reached
over streamable HTTP (``url`` in the lab file, bearer token from ``token_env``). Device agents
hold ONE session each (``client.session(name)``): the client's default opens a new session, a
new server process, per tool call.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient

from device_servers.contract import InstrumentBase


def connections(
    instruments: list[InstrumentBase], config_path: Path, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """MultiServerMCPClient connections for every instrument of a lab."""
    child_env = {**os.environ, **(env or {})}
    out: dict[str, Any] = {}
    for inst in instruments:
        if inst.url:
            headers = {}
            if inst.token_env and os.environ.get(inst.token_env):
                headers["Authorization"] = f"Bearer {os.environ[inst.token_env]}"
            out[inst.id] = {"transport": "streamable_http", "url": inst.url, "headers": headers}
        else:
            out[inst.id] = {
                "transport": "stdio",
                "command": sys.executable,
                "args": ["-m", "labwright", "serve", inst.id, "--config", str(config_path)],
                "env": child_env,
            }
    return out


def client_for(
    instruments: list[InstrumentBase], config_path: Path, env: dict[str, str] | None = None
) -> MultiServerMCPClient:
    return MultiServerMCPClient(connections(instruments, config_path, env))
