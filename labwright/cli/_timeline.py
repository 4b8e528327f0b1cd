"""The run's timeline as a person approves it: per instrument, when each step runs.

One bar per instrument across the estimated makespan (``#`` a step on the critical path,
``=`` another step, ``.`` idle), the figures (makespan, critical path, one step after another)
and a table of every step's start and end. Fits 80 columns, whatever the plan's length.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

# Steps listed one per row at most; a longer plan lists its critical path and says so.
MAX_ROWS = 60


def clock(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour on)."""
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def bars(line: dict[str, Any], width: int) -> list[str]:
    """One line per instrument: its busy time across the makespan, in ``width`` columns."""
    steps = line.get("steps") or []
    names = list(dict.fromkeys(s["instrument"] for s in steps))  # in plan order
    label = max((len(n) for n in names), default=0) + 1
    cells = max(10, width - label - 1)
    span = float(line.get("makespan_s") or 0.0) or 1.0
    critical = set(line.get("critical_path") or [])
    out = []
    for name in names:
        row = ["."] * cells
        for s in (s for s in steps if s["instrument"] == name):
            first = min(cells - 1, int(s["start_s"] / span * cells))
            last = max(first + 1, min(cells, round(s["end_s"] / span * cells)))
            for i in range(first, last):
                row[i] = "#" if s["step"] in critical else ("=" if row[i] == "." else row[i])
        out.append(f"{name:<{label}} {''.join(row)}")
    return out


def headline(line: dict[str, Any]) -> str:
    """The figures in one sentence."""
    if line.get("sequential"):
        return f"estimated {minutes(line['makespan_s'])}, one step after another (asked for)"
    return (
        f"estimated {minutes(line['makespan_s'])} with independent steps at the same time "
        f"(critical path {minutes(line['critical_path_s'])}); one step after another: "
        f"{minutes(line['sequential_s'])}"
    )


def show_timeline(console: Console, line: dict[str, Any] | None) -> None:
    """Print the timeline of a simulation report (nothing when it has none)."""
    if not line or not line.get("steps"):
        return
    steps = line["steps"]
    console.rule("timeline (simulated: instrument time, nothing moved)")
    console.print(headline(line), highlight=False)
    width = min(console.width, 80)
    scale = f"0{clock(line['makespan_s']):>{max(1, width - 1 - _label(steps))}}"
    console.print(f"{'':<{_label(steps)}}{scale}", highlight=False)
    for row in bars(line, width):
        console.print(row, highlight=False)
    console.print("# critical path  = other steps  . idle", highlight=False)
    critical = set(line.get("critical_path") or [])
    shown = steps if len(steps) <= MAX_ROWS else [s for s in steps if s["step"] in critical]
    table = Table("step", "instrument", "start", "end", "after", box=box.SIMPLE, pad_edge=False)
    for s in shown[:MAX_ROWS]:
        mark = "*" if s["step"] in critical else ""
        table.add_row(
            f"{s['step']}{mark}",
            s["instrument"],
            clock(s["start_s"]),
            clock(s["end_s"]),
            _after(s.get("after") or []),
        )
    console.print(table)
    if len(shown) < len(steps) or len(shown) > MAX_ROWS:
        console.print(
            f"{min(len(shown), MAX_ROWS)} of {len(steps)} steps listed (the critical path); "
            "the simulation report holds every step's start and end",
            highlight=False,
        )


def _label(steps: list[dict[str, Any]]) -> int:
    return max((len(s["instrument"]) for s in steps), default=0) + 2


def _after(deps: list[str]) -> str:
    return ", ".join(deps) if len(deps) <= 4 else f"{', '.join(deps[:3])} +{len(deps) - 3}"
