"""``labwright simulate <protocol>``: a protocol on the twin of the configured lab, started lean.

No server, nothing moves: the runtime's own parsing, dry-run gate (policy) and simulation run
in this process. It imports what simulating needs and nothing of the command line (no typer,
no task agent; rich only to print for a person or to say what is wrong): the options are read
with argparse, a bad input is one line on stderr (exit 2), a protocol that fails is exit 1
with its error code. The typer command ``labwright simulate`` forwards its arguments here,
so the options exist once; ``labwright simulate`` and ``python -m labwright simulate`` do
not load the CLI at all (:mod:`labwright.entry`).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from labwright._text import one_line

if TYPE_CHECKING:
    from device_servers.contract import InstrumentBase
    from device_servers.lab import LabConfig

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


class _Parser(argparse.ArgumentParser):
    """Usage errors are one line (``error: ...``, exit 2) like every other command's."""

    def error(self, message: str) -> NoReturn:
        fail(f"{message} (see `labwright simulate --help`)")


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="labwright simulate",
        description="Simulate a protocol on the twin of the configured lab (nothing moves, "
        "no server).",
    )
    p.add_argument("protocol", type=Path, help="Protocol file (YAML or JSON).")
    p.add_argument(
        "--config",
        "-c",
        type=Path,
        help="Lab file (default: $LABWRIGHT_CONFIG, ./lab.yaml, ./examples/lab.yaml).",
    )
    p.add_argument("--instrument", help="Instrument id (default: the protocol's).")
    p.add_argument("--json", dest="as_json", action="store_true", help="Print one JSON report.")
    return p


def _console(stderr: bool) -> Any:
    from rich.console import Console  # only to print for a person, never for --json

    return Console(stderr=stderr)


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """One error line on stderr (the message may echo what a person typed), then exit."""
    from rich.markup import escape

    _console(True).print(
        f"[bold red]error:[/] {escape(one_line(message))}", highlight=False, soft_wrap=True
    )
    raise SystemExit(code)


class Unreadable(ValueError):
    """A protocol file that cannot be read as one; the message is one line naming it."""


def read_protocol(path: Path) -> dict[str, Any]:
    """A protocol file (YAML or JSON) as a dict.

    Raises:
        Unreadable: it cannot be read, is not YAML, or is not a mapping.
    """
    from policies.safe_yaml import YamlError, read_yaml

    try:
        data = read_yaml(path)
    except OSError as exc:
        raise Unreadable(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except YamlError as exc:
        raise Unreadable(f"{path}: not valid YAML or JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise Unreadable(f"{path}: a protocol is a mapping {{name, steps: [{{command, args}}]}}")
    return data


def instrument_problem(lab: LabConfig, inst: InstrumentBase, exc: Exception) -> str:
    """What to say when an instrument's configuration cannot be used: file, index, id."""
    index = next(i for i, x in enumerate(lab.instruments) if x.id == inst.id)
    return f"{lab.source}: instruments[{index}] ({inst.id}): {exc}"


@dataclass
class Simulated:
    """A protocol simulated: the report, its events, and the twin after the last step."""

    report: dict[str, Any]
    counts: Counter[str]  # events by type
    moved: dict[str, float]  # uL dispensed, by liquid (unrounded)
    per_step: list[tuple[int, list[dict[str, Any]]]]
    twin: Any  # None when a step failed


def simulate(protocol: Path, config: Path | None, instrument: str | None) -> Simulated:
    """``protocol`` simulated on the twin of the lab's instrument (the protocol's, or the
    one named, or the first); exits with one line on bad input."""
    from pydantic import ValidationError

    from device_servers.contract import Protocol
    from device_servers.errors import ConfigurationError, DeviceError, pydantic_detail
    from device_servers.factory import make_driver, make_policy
    from device_servers.geometry_cache import default_cache_dir
    from device_servers.lab import ConfigError, load
    from device_servers.runtime import dry_run_check, parse_protocol, simulate_protocol
    from policies import PolicyError

    started = time.perf_counter()
    try:
        lab = load(config)
        data = read_protocol(protocol)
        wanted = instrument or data.get("instrument")
        inst = lab.instruments[0] if wanted is None else lab.instrument(wanted)
    except (ConfigError, Unreadable) as exc:
        fail(str(exc))
    try:
        driver = make_driver(inst, None, cache_dir=default_cache_dir())
        twin = driver.initial_twin()
        policy = make_policy(inst)
    except (ConfigurationError, PolicyError) as exc:
        fail(instrument_problem(lab, inst, exc))
    try:
        name = Protocol.model_validate(data).name
    except ValidationError as exc:
        fail(f"{protocol}: {pydantic_detail(exc)}")
    sim_start = time.perf_counter()
    counts: Counter[str] = Counter()
    moved: Counter[str] = Counter()
    warnings: list[str] = []
    report: dict[str, Any] = {"protocol": name, "instrument": inst.id, "simulated": True}
    report["warnings"] = warnings
    after: Any = None
    per_step: list[tuple[int, list[dict[str, Any]]]] = []
    try:
        _, cmds = parse_protocol(driver, data)
        after, per_step = simulate_protocol(
            driver, twin, cmds, dry_run_check(policy, inst.id, driver, warnings)
        )
    except DeviceError as exc:
        report.update(ok=False, error=exc.to_payload())
    else:
        for _, events in per_step:
            for ev in events:
                counts[ev["type"]] += 1
                if ev["type"] == "liquid_transferred" and ev["data"]["op"] == "dispense":
                    for liquid, vol in ev["data"]["liquids"].items():
                        moved[liquid] += vol
        report.update(
            ok=True,
            steps=len(cmds),
            events=dict(counts),
            dispensed_ul={k: round(v, 3) for k, v in moved.items()},
        )
    report["simulate_ms"] = round((time.perf_counter() - sim_start) * 1000, 3)
    report["total_ms"] = round((time.perf_counter() - started) * 1000, 3)
    return Simulated(report, counts, dict(moved), per_step, after)


def show(done: Simulated) -> None:
    """The report for a person: the outcome, the volumes, the warnings or the error."""
    report, counts = done.report, done.counts
    if not report["ok"]:
        e = report["error"]
        _console(True).print(
            f"[bold red]simulation failed[/] {e['code']}: {e['detail']}\n  fix: {e['fix_hint']}",
            highlight=False,
        )
        return
    out = _console(False)
    out.print(
        f"[green]simulation ok[/] {report['protocol']} on {report['instrument']}: "
        f"{report['steps']} steps, {counts['tip_picked_up']} tips, "
        f"{counts['liquid_transferred']} liquid moves, "
        f"{report['simulate_ms']} ms (simulated: nothing moved)"
    )
    for liquid, vol in sorted(done.moved.items()):
        out.print(f"  dispensed {liquid}: {vol:.1f} uL")
    for warning in report["warnings"]:
        out.print(f"  [yellow]warning:[/] {warning}", highlight=False)


def main(argv: list[str] | None = None) -> int:
    """``labwright simulate`` on ``argv``: 0 when the protocol simulates, 1 when it fails."""
    args = parser().parse_args(argv)
    done = simulate(args.protocol, args.config, args.instrument)
    if args.as_json:
        print(json.dumps(done.report))
    else:
        show(done)
    return 0 if done.report["ok"] else EXIT_FAILED
