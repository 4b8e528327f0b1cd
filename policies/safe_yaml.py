"""Reading YAML files people and models write: bounded, and every failure one message.

Every YAML file Labwright reads (lab files, rules files, protocols, scenarios) goes through
:func:`load_yaml`; it lives in the lowest layer that reads YAML so every layer can use it.
``yaml.safe_load`` alone constructs only plain types, but it will expand an alias bomb (nine
levels of ten aliases: 10^9 leaves, gigabytes) and recurse into a document nested a few
hundred levels deep until Python's stack gives out. Here the event stream is read first,
without building anything: anchors plus aliases beyond :data:`MAX_ALIASES`, a document that
would expand to more than :data:`MAX_NODES` nodes, or nesting beyond :data:`MAX_DEPTH` are
refused before any object is made. Bytes that are not UTF-8 are refused with where they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAX_ALIASES = 100
MAX_NODES = 1_000_000
MAX_DEPTH = 64

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when PyYAML has it


class YamlError(ValueError):
    """A YAML text that cannot be used; the message is one line."""


def _one_line(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(exc).split())


def check_limits(text: str) -> None:
    """Walk the YAML events; refuse alias bombs and deep nesting before anything is built."""
    sizes: dict[str, int] = {}  # anchor -> nodes its value expands to
    stack: list[list[Any]] = []  # open collections: [anchor, nodes so far]
    aliases = total = 0

    def add(count: int) -> None:
        nonlocal total
        if stack:
            stack[-1][1] += count
        else:
            total += count
        if total + sum(frame[1] for frame in stack) > MAX_NODES:
            raise YamlError(f"the document expands to more than {MAX_NODES:,} values")

    for event in yaml.parse(text, Loader=_LOADER):
        anchor = getattr(event, "anchor", None)
        if anchor is not None or isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise YamlError(f"more than {MAX_ALIASES} anchors and aliases")
        if isinstance(event, yaml.AliasEvent):
            add(sizes.get(str(event.anchor), 1))
        elif isinstance(event, yaml.ScalarEvent):
            add(1)
            if anchor is not None:
                sizes[anchor] = 1
        elif isinstance(event, yaml.CollectionStartEvent):
            stack.append([anchor, 1])
            if len(stack) > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else "?"
                raise YamlError(f"nested deeper than {MAX_DEPTH} levels (line {line})")
        elif isinstance(event, yaml.CollectionEndEvent) and stack:
            anchor_of, count = stack.pop()
            if anchor_of is not None:
                sizes[anchor_of] = count
            add(count)


def load_yaml(text: str | bytes) -> Any:
    """Parse one YAML (or JSON) document within the limits; raise YamlError otherwise."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise YamlError(
                f"not UTF-8 text (byte 0x{text[exc.start]:02x} at offset {exc.start})"
            ) from exc
    try:
        check_limits(text)
        return yaml.load(text, Loader=_LOADER)  # a safe loader: plain types only
    except yaml.YAMLError as exc:
        raise YamlError(_one_line(exc)) from exc
    except RecursionError as exc:  # pragma: no cover - the depth limit comes first
        raise YamlError(f"nested deeper than {MAX_DEPTH} levels") from exc


def read_yaml(path: Path) -> Any:
    """A YAML file's document; OSError and YamlError name what went wrong (not the path)."""
    return load_yaml(path.read_bytes())
