"""What every command shares: the consoles, ``--config``, failing with one line, lab loading."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console

from device_servers.lab import ConfigError, LabConfig, load
from labwright._text import one_line
from policies.safe_yaml import YamlError, read_yaml

err = Console(stderr=True)
out = Console()

ConfigOpt = typer.Option(
    None,
    "--config",
    "-c",
    help="Lab file (default: $LABWRIGHT_CONFIG, ./lab.yaml, ./examples/lab.yaml).",
)


def printable(text: str) -> str:
    """``text`` safe to show on one terminal line (:func:`labwright._text.one_line`), rich
    markup taken literally."""
    from rich.markup import escape

    return escape(one_line(text))


def error_line(message: str) -> None:
    """One error line on stderr (the message may echo anything a person typed)."""
    err.print(f"[bold red]error:[/] {printable(message)}", highlight=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one error line and exit (2: bad input)."""
    error_line(message)
    raise typer.Exit(code)


def lab_of(path: Path | None) -> LabConfig:
    """The lab file, or one line naming what is wrong with it."""
    try:
        return load(path)
    except ConfigError as exc:
        fail(str(exc))


def instrument_of(lab: LabConfig, instrument: str | None) -> Any:
    """An instrument's configuration (the first one when none is named)."""
    try:
        if instrument is None:
            return lab.instruments[0]
        return lab.instrument(instrument)
    except ConfigError as exc:
        fail(str(exc))


def config_problem(lab: LabConfig, inst: Any, exc: Exception) -> NoReturn:
    """Fail naming the lab file and the instrument whose configuration cannot be used."""
    index = next(i for i, x in enumerate(lab.instruments) if x.id == inst.id)
    fail(f"{lab.source}: instruments[{index}] ({inst.id}): {exc}")


def cache_dir() -> Path:
    """Derived data that is safe to delete (deck geometry): $XDG_CACHE_HOME/labwright."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "labwright"


def load_protocol(path: Path) -> dict[str, Any]:
    """A protocol file (YAML or JSON) as a dict."""
    try:
        data = read_yaml(path)
    except OSError as exc:
        fail(f"{path}: cannot read: {exc.strerror or exc}")
    except YamlError as exc:
        fail(f"{path}: not valid YAML or JSON: {exc}")
    if not isinstance(data, dict):
        fail(f"{path}: a protocol is a mapping {{name, steps: [{{command, args}}]}}")
    return data
