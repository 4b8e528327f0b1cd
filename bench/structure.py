#!/usr/bin/env python3
"""Structure figures of the product: largest modules, import circles, imports against the layers.

Reads the source as text (``ast``), runs nothing of the project. An import counts wherever it
stands (module level or inside a function), except under ``if TYPE_CHECKING:``.

Layers, lowest first (an import may only go down or stay within a package)::

    policies, state_store   import nothing else of the project
    device_servers          may import policies, state_store
    agents                  may import policies, state_store and device_servers.contract only
    evals, bench            may import agents, device_servers, policies, state_store
    labwright               the composition root: imports every layer

Usage::

    .venv/bin/python bench/structure.py [--top 15] [--limit 400] [--json PATH]

Exit status is 0 whatever it finds; ``tests/test_layering.py`` holds the rules as tests.
"""

from __future__ import annotations

import argparse
import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("labwright", "device_servers", "policies", "state_store", "agents", "evals")
SCANNED = (*PRODUCT, "bench")
RANK = {
    "policies": 0,
    "state_store": 0,
    "device_servers": 1,
    "agents": 2,
    "evals": 3,
    "bench": 3,
    "labwright": 4,
}
# What a layer may import from a lower one, when not all of it (prefix match on module names).
ALLOWED_FROM = {"agents": {"device_servers": ("device_servers.contract",)}}
ISOLATED = ("policies", "state_store")


@dataclass
class Graph:
    """Modules of the scanned packages and the project imports of each."""

    files: dict[str, Path] = field(default_factory=dict)
    edges: dict[str, set[str]] = field(default_factory=dict)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                for sub in ast.walk(child):
                    if hasattr(sub, "lineno"):
                        lines.add(sub.lineno)
    return lines


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` is, or lies in."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in known:
            return candidate
        parts.pop()
    return None


def build_graph(root: Path = ROOT) -> Graph:
    graph = Graph()
    for top in SCANNED:
        for path in sorted((root / top).rglob("*.py")):
            if ".venv" in path.parts:
                continue
            graph.files[module_name(path)] = path
    for mod, path in graph.files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_lines(tree)
        is_pkg = path.name == "__init__.py"
        targets: set[str] = set()
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                names = [f"{base}.{alias.name}" for alias in node.names] + [base]
            else:
                continue
            for name in names:
                found = _resolve(name, graph.files)
                if found and found != mod:
                    targets.add(found)
                    break
        graph.edges[mod] = targets
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph.edges):
        if v not in index:
            visit(v)
    return out


def upward(graph: Graph) -> list[tuple[str, str]]:
    """Imports from a lower layer to a higher one, or past what a layer may see below it."""
    bad: list[tuple[str, str]] = []
    for src, targets in sorted(graph.edges.items()):
        top = src.split(".")[0]
        for dst in sorted(targets):
            dtop = dst.split(".")[0]
            if dtop == top:
                continue
            if top in ISOLATED or RANK[dtop] > RANK[top]:
                bad.append((src, dst))
                continue
            allowed = ALLOWED_FROM.get(top, {}).get(dtop)
            if allowed is not None and not dst.startswith(allowed):
                bad.append((src, dst))
    return bad


def sizes(graph: Graph) -> list[tuple[int, str]]:
    rows = []
    for mod, path in graph.files.items():
        if mod.split(".")[0] in PRODUCT:
            rows.append((len(path.read_text(encoding="utf-8").splitlines()), mod))
    return sorted(rows, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--limit", type=int, default=400)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    graph = build_graph()
    rows = sizes(graph)
    over = [(n, m) for n, m in rows if n > args.limit]
    found = circles(graph)
    bad = upward(graph)
    print(f"product modules: {len(rows)}, over {args.limit} lines: {len(over)}")
    for n, m in rows[: args.top]:
        print(f"  {n:5d}  {m}")
    print(f"import circles: {len(found)}")
    for comp in found:
        print("  " + " <-> ".join(comp))
    print(f"imports against the layers: {len(bad)}")
    for src, dst in bad:
        print(f"  {src} -> {dst}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {"largest": rows[: args.top], "over_limit": over, "circles": found, "upward": bad},
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
