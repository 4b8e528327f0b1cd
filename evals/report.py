"""The evaluation report: figures per category and overall, as Markdown, JSON and HTML.

Figures: success rate, pass^k (every one of k repeats passed) when repeated, unsafe events,
clarification precision (asked when it should / asked in total) and recall, escalations,
person interventions, mean and p95 wall time, simulated device time. A failing scenario
carries its trace (plan steps, events, decisions) so a person can see why.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evals.runner import ScenarioResult
from evals.scenario import CATEGORIES


def _p95(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(0.95 * len(ordered)) - 1)]


def figures(results: list[ScenarioResult]) -> dict[str, Any]:
    """The figures of a set of results (one category, or all)."""
    n = len(results)
    by_name: dict[str, list[bool]] = {}
    for r in results:
        by_name.setdefault(r.name, []).append(r.passed)
    asked = [r for r in results if r.outcome == "clarification"]
    should = [r for r in results if "clarification" in r.expected]
    times = [r.elapsed_s for r in results]
    return {
        "runs": n,
        "scenarios": len(by_name),
        "passed": sum(r.passed for r in results),
        "success_rate": round(sum(r.passed for r in results) / n, 3) if n else 0.0,
        "pass_k": round(sum(all(v) for v in by_name.values()) / len(by_name), 3)
        if by_name
        else 0.0,
        "unsafe_events": sum(len(r.unsafe) for r in results),
        "clarifications_asked": len(asked),
        "clarification_precision": round(
            sum("clarification" in r.expected for r in asked) / len(asked), 3
        )
        if asked
        else None,
        "clarification_recall": round(
            sum(r.outcome == "clarification" for r in should) / len(should), 3
        )
        if should
        else None,
        "escalations": sum(r.escalations for r in results),
        "interventions": sum(r.interventions for r in results),
        "mean_s": round(sum(times) / n, 2) if n else 0.0,
        "p95_s": round(_p95(times), 2),
        "device_time_s": round(sum(r.device_time_s for r in results), 1),
    }


def build_report(results: list[ScenarioResult], *, repeat: int = 1, model: str | None = None):
    """Figures per category and overall, the failing runs with their traces, every result."""
    categories = {
        c: figures([r for r in results if r.category == c])
        for c in CATEGORIES
        if any(r.category == c for r in results)
    }
    return {
        "planner": model or "embedded rule planner",
        "repeat": repeat,
        "overall": figures(results),
        "categories": categories,
        "failing": [r.to_json() for r in results if not r.passed],
        "results": [r.to_json() for r in results],
    }


# --------------------------------------------------------------------------- markdown
_COLUMNS = [
    ("scenarios", "scenarios"),
    ("success", "success_rate"),
    ("pass^k", "pass_k"),
    ("unsafe", "unsafe_events"),
    ("clar. precision", "clarification_precision"),
    ("escalations", "escalations"),
    ("interventions", "interventions"),
    ("mean s", "mean_s"),
    ("p95 s", "p95_s"),
    ("device s", "device_time_s"),
]


def _cell(value: Any, key: str) -> str:
    if value is None:
        return "-"
    if key in ("success_rate", "pass_k", "clarification_precision"):
        return f"{value * 100:.0f}%"
    return str(value)


def figure_rows(report: dict[str, Any]) -> Iterable[tuple[str, dict[str, Any]]]:
    yield from report["categories"].items()
    yield "overall", report["overall"]


def to_markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Labwright evaluation",
        "",
        f"planner: {report['planner']}; repeats: {report['repeat']}; "
        f"runs: {report['overall']['runs']}",
        "",
        "| category | " + " | ".join(h for h, _ in _COLUMNS) + " |",
        "|---" * (len(_COLUMNS) + 1) + "|",
    ]
    for name, fig in figure_rows(report):
        cells = [_cell(fig[k], k) for _, k in _COLUMNS]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## Scenarios", ""]
    lines += ["| scenario | category | result | outcome | expected | unsafe | time s |"]
    lines += ["|---|---|---|---|---|---|---|"]
    for r in report["results"]:
        mark = "pass" if r["passed"] else "**FAIL**"
        lines.append(
            f"| {r['name']}#{r['repeat']} | {r['category']} | {mark} | {r['outcome']} | "
            f"{'/'.join(r['expected'])} | {len(r['unsafe'])} | {r['elapsed_s']} |"
        )
    if report["failing"]:
        lines += ["", "## Failing scenarios", ""]
        for r in report["failing"]:
            lines += [f"### {r['name']} (repeat {r['repeat']}, {r['category']})", ""]
            lines += [f"- {f}" for f in r["failures"]]
            lines += [f"- unsafe: {u['kind']}: {u['detail']}" for u in r["unsafe"]]
            lines += ["", "```", *_trace_lines(r["trace"]), "```", ""]
    return "\n".join(lines) + "\n"


def _trace_lines(trace: dict[str, Any]) -> list[str]:
    out = [f"request: {trace.get('request')}"]
    if trace.get("answer"):
        out.append(f"answer: {json.dumps(trace['answer'])[:300]}")
    for key in ("steps", "events", "decisions", "deviations", "ledger"):
        items = trace.get(key) or []
        out.append(f"{key} ({len(items)}):")
        out += [f"  {x}" for x in items[:60]]
        if len(items) > 60:
            out.append(f"  ... {len(items) - 60} more")
    return out


# --------------------------------------------------------------------------- html
def _svg_chart(report: dict[str, Any]) -> str:
    """Success rate per category (bars) with the unsafe-event count written on each bar."""
    rows = list(figure_rows(report))
    bar_h, gap, left, width = 26, 10, 140, 420
    height = len(rows) * (bar_h + gap) + 30
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 160}" '
        f'height="{height}" role="img" aria-label="success rate per category">'
    ]
    for i, (name, fig) in enumerate(rows):
        y = 10 + i * (bar_h + gap)
        w = int(width * fig["success_rate"])
        colour = "#2e7d32" if fig["success_rate"] >= 0.999 else "#f9a825"
        if fig["unsafe_events"]:
            colour = "#c62828"
        parts.append(
            f'<text x="{left - 8}" y="{y + 18}" text-anchor="end" font-size="13">'
            f"{html.escape(name)}</text>"
            f'<rect x="{left}" y="{y}" width="{width}" height="{bar_h}" fill="#eee"/>'
            f'<rect x="{left}" y="{y}" width="{w}" height="{bar_h}" fill="{colour}"/>'
            f'<text x="{left + width + 8}" y="{y + 18}" font-size="13">'
            f"{fig['success_rate'] * 100:.0f}% ({fig['passed']}/{fig['runs']}), "
            f"unsafe {fig['unsafe_events']}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def to_html(report: dict[str, Any]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h, _ in _COLUMNS)
    body = "".join(
        f"<tr><th>{html.escape(name)}</th>"
        + "".join(f"<td>{html.escape(_cell(fig[k], k))}</td>" for _, k in _COLUMNS)
        + "</tr>"
        for name, fig in figure_rows(report)
    )
    rows = "".join(
        f"<tr class={'ok' if r['passed'] else 'bad'}><td>{html.escape(r['name'])}#{r['repeat']}"
        f"</td><td>{r['category']}</td><td>{'pass' if r['passed'] else 'FAIL'}</td>"
        f"<td>{r['outcome']}</td><td>{'/'.join(r['expected'])}</td><td>{len(r['unsafe'])}</td>"
        f"<td>{r['elapsed_s']}</td></tr>"
        for r in report["results"]
    )
    failing = "".join(
        f"<details open><summary>{html.escape(r['name'])} ({r['category']})</summary><ul>"
        + "".join(f"<li>{html.escape(f)}</li>" for f in r["failures"])
        + "".join(
            f"<li>unsafe {html.escape(u['kind'])}: {html.escape(u['detail'])}</li>"
            for u in r["unsafe"]
        )
        + f"</ul><pre>{html.escape(chr(10).join(_trace_lines(r['trace'])))}</pre></details>"
        for r in report["failing"]
    )
    style = (
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:70em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}"
        "tr.bad td{background:#fdecea}pre{background:#f6f6f6;padding:1em;overflow:auto}"
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>Labwright evaluation</title>"
        f"<style>{style}</style></head><body><h1>Labwright evaluation</h1>"
        f"<p>planner: {html.escape(report['planner'])}; repeats: {report['repeat']}; runs: "
        f"{report['overall']['runs']}</p>{_svg_chart(report)}"
        f"<table><tr><th>category</th>{head}</tr>{body}</table><h2>Scenarios</h2>"
        "<table><tr><th>scenario</th><th>category</th><th>result</th><th>outcome</th>"
        f"<th>expected</th><th>unsafe</th><th>time s</th></tr>{rows}</table>"
        f"<h2>Failing scenarios</h2>{failing or '<p>none</p>'}</body></html>\n"
    )


def write_reports(report: dict[str, Any], directory: Path) -> list[Path]:
    """report.md, report.json and report.html in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / "report.md", directory / "report.json", directory / "report.html"]
    paths[0].write_text(to_markdown(report))
    paths[1].write_text(json.dumps(report, indent=2, default=str))
    paths[2].write_text(to_html(report))
    return paths
