"""The instrument runtime every device server shares.

For each command: parse -> gate (e-stop, staleness, policy, execution setting) -> simulate on a
copy of the twin -> (dry run: answer) -> ledger intent -> adapter, primitive by primitive ->
twin applied -> read back and reconcile (deviations) -> ledger outcome. Runs are lists of
commands executed in the background with an append-only event log.

The parts, composed over one shared :class:`Status`:

- ``_trial``: parsing and simulation on a copy of the twin (also ``labwright simulate``)
- ``_gate``: e-stop, staleness, execution setting, policy, approvals; a protocol's preflight
- ``_dispatch``: at most once through the ledger; completing an in-doubt action
- ``_recovery``: start-up after a crash, read back, confirm_state, e-stop and its reset
- ``_runs``: background runs, their cancellation and event logs

Importing the package loads only parsing, simulation and the policy's dry-run gate (what
``labwright simulate`` needs: no ledger, SQLite or event loop); :class:`InstrumentRuntime`
and the server's parts load when first asked for.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from device_servers.runtime._policy import dry_run_check
from device_servers.runtime._trial import (
    ASSUME,
    Assume,
    Trial,
    parse_assume,
    parse_command,
    parse_protocol,
    simulate_protocol,
)

if TYPE_CHECKING:
    from device_servers.runtime._gate import CONTROL_COMMANDS
    from device_servers.runtime._instrument import InstrumentRuntime
    from device_servers.runtime._recovery import RESTART_STALE
    from device_servers.runtime._status import Status
    from device_servers.runtime._trail import CALLER

# name -> the module that defines it, imported the first time the name is asked for
_SERVER_PARTS = {
    "CALLER": "_trail",
    "CONTROL_COMMANDS": "_gate",
    "InstrumentRuntime": "_instrument",
    "RESTART_STALE": "_recovery",
    "Status": "_status",
}

__all__ = [
    "ASSUME",
    "CALLER",
    "CONTROL_COMMANDS",
    "RESTART_STALE",
    "Assume",
    "InstrumentRuntime",
    "Status",
    "Trial",
    "dry_run_check",
    "parse_assume",
    "parse_command",
    "parse_protocol",
    "simulate_protocol",
]


def __getattr__(name: str) -> Any:
    module = _SERVER_PARTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
