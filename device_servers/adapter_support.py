"""What every instrument adapter needs the same way: quiet stdout, hardware backends built
from the lab config, and the translation of failures any backend can raise.

No PyLabRobot import here: each adapter passes its own PyLabRobot backend base class.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from typing import Any

from device_servers.contract import BackendSpec
from device_servers.errors import BackendFailed, Code, ConfigurationError


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Keep any ``print`` of a backend off stdout, which may carry an MCP stream."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


def backend_class(spec: BackendSpec, base: type) -> type:
    """The PyLabRobot backend class a lab configures by class path, type-checked.

    The path was checked as text when the lab file was read (an allowed package, see
    ``BackendSpec``); only then is its module imported.
    """
    module_name, _, class_name = (spec.class_path or "").rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigurationError(
            f"backend.class_path: cannot import {spec.class_path}: {exc}"
        ) from exc
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ConfigurationError(
            f"backend.class_path: {spec.class_path} is not a PyLabRobot {base.__name__}"
        )
    return cls


def hardware_backend(spec: BackendSpec, base: type, args: dict[str, Any] | None = None) -> Any:
    """Construct the PyLabRobot backend a lab configures by class path (never for tests).

    ``args``: the constructor arguments when the adapter keeps some of ``spec.args`` itself.
    """
    return backend_class(spec, base)(**(spec.args if args is None else args))


def common_failure(
    exc: BaseException, where: str, subject: str = "the instrument"
) -> BackendFailed:
    """Timeouts, lost connections and anything unexpected: the state is unknown after each."""
    if isinstance(exc, TimeoutError):
        return BackendFailed(
            Code.HARDWARE_TIMEOUT,
            f"{where} did not finish in time",
            f"{subject}'s state is unknown: read_back before anything else",
            defined=False,
        )
    if isinstance(exc, ConnectionError):
        return BackendFailed(
            Code.CONNECTION_LOST,
            f"{where}: {exc}",
            f"reconnect, then read_back {subject}; do not re-send blindly",
            defined=False,
        )
    return BackendFailed(
        Code.ADAPTER_FAULT,
        f"{where}: {type(exc).__name__}: {exc}",
        f"stop and ask a person to check {subject}",
        defined=False,
    )
