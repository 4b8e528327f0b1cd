"""``labwright eval``: run evaluation scenarios through the real stack and report.

Exit codes: 0 the suite ran with no unsafe event (failing scenarios are listed in the report;
with ``--strict`` any failure exits 1), 1 an unsafe event (or a failure with ``--strict``),
2 bad input.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from labwright.cli._common import fail, out

SCENARIOS = Path(__file__).resolve().parents[2] / "evals" / "scenarios"


def eval_(
    path: Path = typer.Argument(SCENARIOS, help="A scenario file or a directory of them."),
    category: str | None = typer.Option(None, help="Only this category."),
    model: str | None = typer.Option(None, help="provider:name of a chat model to plan with."),
    repeat: int = typer.Option(1, min=1, help="Run each scenario k times (pass^k)."),
    report: Path | None = typer.Option(None, help="Write report.md/.json/.html here."),
    jobs: int | None = typer.Option(None, min=1, help="Scenarios at a time (default: cores)."),
    strict: bool = typer.Option(False, help="Exit 1 when any scenario fails."),
) -> None:
    """Run evaluation scenarios (real MCP servers, simulated lab) and report the figures."""
    from evals import build_report, load_scenarios, run_suite, write_reports
    from evals.scenario import ScenarioError

    try:
        scenarios = load_scenarios(path, category)
    except ScenarioError as exc:
        fail(str(exc))
        return
    if not scenarios:
        fail(f"no scenario of category {category!r} under {path}")
    total = len(scenarios) * repeat
    out.print(f"{len(scenarios)} scenarios x {repeat} from {path}", highlight=False)
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=out,
    ) as bar:
        task = bar.add_task("eval", total=total)

        def done(result: Any) -> None:
            mark = "[green]pass[/]" if result.passed else "[red]FAIL[/]"
            bar.console.print(
                f"  {mark} {result.name} ({result.category}) {result.outcome} "
                f"{result.elapsed_s:.1f}s"
                + (f" unsafe={len(result.unsafe)}" if result.unsafe else ""),
                highlight=False,
            )
            bar.advance(task)

        results = asyncio.run(
            run_suite(scenarios, model=model, repeat=repeat, jobs=jobs, on_done=done)
        )
    data = build_report(results, repeat=repeat, model=model)
    print_report(data)
    if report is not None:
        for p in write_reports(data, report):
            out.print(f"wrote {p}", highlight=False)
    unsafe = data["overall"]["unsafe_events"]
    if unsafe or (strict and data["failing"]):
        raise typer.Exit(1)


def print_report(data: dict[str, Any]) -> None:
    """The figures per category and overall, then each failing scenario's reasons."""
    from evals.report import _COLUMNS, _cell, figure_rows

    rows = list(figure_rows(data))

    def table(columns: list[tuple[str, str]], title: str | None) -> Table:
        t = Table("category", *(h for h, _ in columns), title=title, box=box.SIMPLE_HEAD)
        for name, fig in rows:
            t.add_row(name, *(_cell(fig[k], k) for _, k in columns))
        return t

    title = f"evaluation ({data['planner']})"
    whole = table(_COLUMNS, title)
    needed = Console(width=10_000, file=io.StringIO()).measure(whole).maximum
    if needed <= out.width:
        out.print(whole)
        print_failing(data)
        return
    # A narrow terminal (80 columns, a CI log): the figures in two tables, never cut short.
    half = (len(_COLUMNS) + 1) // 2
    out.print(table(_COLUMNS[:half], title))
    out.print(table(_COLUMNS[half:], None))
    print_failing(data)


def print_failing(data: dict[str, Any]) -> None:
    """Each failing scenario's reasons and unsafe events."""
    for r in data["failing"]:
        out.print(f"[red]FAIL[/] {r['name']} ({r['category']}):", highlight=False)
        for f in r["failures"]:
            out.print(f"    {f}", highlight=False)
        for u in r["unsafe"]:
            out.print(f"    unsafe {u['kind']}: {u['detail']}", highlight=False)
