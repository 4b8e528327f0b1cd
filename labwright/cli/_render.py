"""How the CLI shows things: progress lines, plans, questions, reports, readings."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from labwright.cli._timeline import show_timeline


class Progress:
    """One line per dispatched step (and per notable decision)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, what: str, data: dict[str, Any]) -> None:
        if what == "dispatch":
            attempt = f" (attempt {data['attempt']})" if data.get("attempt", 1) > 1 else ""
            self.console.print(
                f"  [{data['index'] + 1:>3}/{data['total']}] {data['step']:<4} "
                f"{data['instrument']:<8} {data['command']}{attempt}",
                highlight=False,
            )
        elif what in ("retry", "in_doubt_resolved"):
            self.console.print(f"  [yellow]{what}[/] {data}", highlight=False)


def show_trace(console: Console, plan: dict[str, Any]) -> None:
    """The "understood as" trace: each clause of the request, what it was read as, its steps."""
    trace = plan.get("trace") or []
    if not trace:
        return
    console.print("[bold]understood as[/]")
    for item in trace:
        steps = item.get("steps") or []
        where = f"{steps[0]}..{steps[-1]}" if len(steps) > 1 else (steps[0] if steps else "-")
        console.print(f'  "{item["clause"]}"', highlight=False, markup=False)
        console.print(f"    -> {item['understood']} [{where}]", highlight=False, markup=False)
    if plan.get("tip_policy"):
        console.print(f"  tips: {plan['tip_policy']}", highlight=False, markup=False)


def show_plan(console: Console, payload: dict[str, Any]) -> None:
    plan = payload["plan"]
    sim = payload.get("simulation") or {}
    console.rule("plan")
    console.print(plan["summary"], highlight=False)
    show_trace(console, plan)
    table = Table("step", "instrument", "command", "arguments")
    for step in plan["steps"]:
        args = ", ".join(f"{k}={_short(v)}" for k, v in step["args"].items())
        table.add_row(step["id"], step["instrument"], step["command"], args)
    console.print(table)
    for change in payload.get("difference") or []:  # a replanned rest: what changed
        what = "; ".join(
            f"{k} {v['was']} -> {v['now']}" for k, v in change.get("changed", {}).items()
        )
        console.print(f"changed: {change['step']} {what or change}", highlight=False)
    console.rule("simulation (twins only: nothing moved)")
    liquids = ", ".join(f"{k} {v:.1f} uL" for k, v in sim.get("dispensed_ul", {}).items())
    console.print(
        f"{sim.get('steps')} steps {sim.get('per_instrument')}; {sim.get('transfers')} "
        f"transfers, {sim.get('liquid_moves')} aspirate/dispense, {sim.get('tips_used')} tips, "
        f"{sim.get('plate_moves')} plate moves; dispensed: {liquids or '-'}; estimated "
        f"{sim.get('duration_s', 0) / 60:.1f} min one step after another",
        highlight=False,
    )
    show_timeline(console, sim.get("timeline"))
    for warning in sim.get("warnings", []):
        console.print(f"[yellow]warning:[/] {warning}", highlight=False)
    for item in payload.get("needs_extra_approval", []):
        console.print(
            f"[yellow]needs your approval again at the instrument:[/] {item['step']} "
            f"{item['instrument']} {item['command']}: {item['reason']}",
            highlight=False,
        )


def _short(value: Any) -> str:
    """Long well lists as first..last (n); nested arguments (a profile's stages) compactly:
    ``(steps=(celsius=95 hold_s=15; celsius=60 hold_s=30) repeats=35)``."""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict):
        return "(" + " ".join(f"{k}={_short(v)}" for k, v in value.items()) + ")"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        inner = "; ".join(_short(v)[1:-1] for v in value)
        return f"({inner})" if len(value) > 1 or "=" in inner else inner
    if isinstance(value, list) and len(value) > 3:
        return f"{value[0]}..{value[-1]} ({len(value)})"
    if isinstance(value, list):
        return ",".join(_short(v) for v in value)
    return str(value)


def show_question(console: Console, payload: dict[str, Any]) -> None:
    obs = payload.get("observation") or {}
    error = obs.get("error") or {}
    console.rule(f"[yellow]a person is needed[/] ({payload.get('kind')})")
    console.print(f"step {payload.get('step')}: {payload.get('reason')}", highlight=False)
    if error:
        console.print(
            f"{error.get('code')}: {error.get('detail')}\nfix: {error.get('fix_hint')}",
            highlight=False,
        )
    if obs.get("transport_error"):
        console.print(f"transport: {obs['transport_error']}", highlight=False)
    if payload.get("question"):
        console.print(payload["question"], highlight=False)
    for answer, meaning in (payload.get("options") or {}).items():
        console.print(f"  {answer}: {meaning}", highlight=False)


def show_report(console: Console, report: dict[str, Any]) -> None:
    console.rule(f"report: {report['status']}")
    answer = report.get("answer")
    if answer:
        key = "question" if answer.get("kind") == "clarification" else "reason"
        console.print(f"{answer.get('kind')}: {answer.get(key)}", highlight=False)
        if answer.get("options"):
            console.print(f"options: {', '.join(answer['options'])}", highlight=False)
        return
    console.print(
        f"{report.get('steps_done')}/{report.get('steps_total')} steps done "
        f"(simulated={report.get('simulated')}); deviations: {len(report.get('deviations', []))}",
        highlight=False,
    )
    for reading in report.get("readings", []):
        for table in reading_grids(reading, console.width):
            console.print(table)


def _fmt_reading(values: list[float]) -> str:
    """One format for a whole grid: 3 decimals for ODs, fewer for large counts."""
    top = max((abs(v) for v in values), default=0.0)
    return ".3f" if top < 10 else ".1f" if top < 1000 else ".0f"


def reading_grids(reading: dict[str, Any], width: int = 80) -> list[Table]:
    """A reading as plate grids that fit ``width`` columns: one grid, or the plate's columns
    split over several when the values are too wide (never a value cut short)."""
    values: dict[str, float] = reading.get("values", {})
    rows = sorted({w[0] for w in values}, key=str)
    cols = sorted({int(w[1:]) for w in values})
    fmt = _fmt_reading(list(values.values()))
    cells = {w: format(v, fmt) for w, v in values.items()}
    cell = max((len(c) for c in cells.values()), default=1)
    per_table = max(1, (width - 2) // (max(cell, len(str(cols[-1]) if cols else "")) + 1))
    if reading.get("wavelength_nm"):
        what = f" at {reading['wavelength_nm']} nm"
    elif reading.get("excitation_nm"):
        what = f" at {reading['excitation_nm']}/{reading.get('emission_nm')} nm"
    else:
        what = ""
    title = (
        f"{reading.get('mode')} of {reading.get('plate')}{what} "
        f"({reading.get('unit', '')}, simulated={reading.get('simulated')})"
    )
    tables = []
    for start in range(0, len(cols), per_table):
        part = cols[start : start + per_table]
        table = Table(
            title=title if start == 0 else None,
            box=box.SIMPLE_HEAD,
            padding=(0, 0),
            pad_edge=False,
            show_edge=False,
        )
        table.add_column("")
        for c in part:
            table.add_column(str(c), justify="right", no_wrap=True)
        for r in rows:
            table.add_row(r, *(cells.get(f"{r}{c}", "") for c in part))
        tables.append(table)
    return tables


def plate_table(state: dict[str, Any], plate: str, row: str) -> Table:
    table = Table(title=f"{plate} row {row} (from get_state)")
    table.add_column("well")
    table.add_column("volume uL", justify="right")
    table.add_column("dye fraction", justify="right")
    wells = state["labware"][plate]["wells"]
    for col in range(1, 13):
        name = f"{row}{col}"
        w = wells.get(name, {"volume_ul": 0, "contents": {}})
        vol = w["volume_ul"]
        dye = w["contents"].get("dye", 0.0)
        table.add_row(name, f"{vol:.1f}", f"{dye / vol:.4f}" if vol else "-")
    return table


# Below this the reader's noise (about 0.002 OD) dominates a blank-subtracted signal.
NOISE_FLOOR_OD = 0.02


def readings_table(reading: dict[str, Any], wells: list[str], blank_well: str) -> Table:
    """OD per well, minus the OD of an empty well, and each well's ratio to the previous one."""
    values = reading["values"]
    blank = values[blank_well]
    table = Table(
        title=f"absorbance of {reading['plate']} at {reading.get('wavelength_nm')} nm, "
        f"blank {blank_well} = {blank:.4f} OD (simulated={reading.get('simulated')})"
    )
    for column in ("well", "OD", "OD - blank", "ratio to previous"):
        table.add_column(column, justify="right")
    previous = None
    for well in wells:
        signal = values[well] - blank
        if previous is None:
            ratio = "-"
        elif min(signal, previous) < NOISE_FLOOR_OD:
            ratio = "(at noise level)"
        else:
            ratio = f"{signal / previous:.3f}"
        table.add_row(well, f"{values[well]:.4f}", f"{signal:.4f}", ratio)
        previous = signal
    return table
