"""What every command shares: the consoles, ``--config``, failing with one line, lab loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.console import Console

from device_servers.lab import ConfigError, LabConfig, load
from labwright._text import one_line
from labwright.simulating import Unreadable, instrument_problem, read_protocol

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
    fail(instrument_problem(lab, inst, exc))


def load_protocol(path: Path) -> dict[str, Any]:
    """A protocol file (YAML or JSON) as a dict."""
    try:
        return read_protocol(path)
    except Unreadable as exc:
        fail(str(exc))
