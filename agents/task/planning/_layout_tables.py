"""Tables that lay out a plate: a header naming the wells, the liquid and the volume columns
("| well | reagent | vol (uL) |", "Wells, Liquid, Volume") and a row per well set under it. Each
row becomes one list item, ``- wells: volume unit liquid``, under a heading that names the
plate when a line beside the table does ("plate: elisa_1", "Plate - elisa_1"), which the later
stages read like any bulleted plate map.

A table needs all three columns; a row needs a well set, a liquid and a number; anything else
is left as it was written.
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
_SEP = re.compile(r"\s*(?:\t|\||,|;)\s*|\s{2,}")
_RULE = re.compile(r"^[\s|:+-]+$")  # a Markdown table's |---|---| line
_ROLES = (
    ("wells", re.compile(r"^(?:dest(?:ination)?\s+)?(?:wells?|positions?|locations?)$", _FLAGS)),
    ("liquid", re.compile(r"^(?:liquid|reagent|solution|buffer|contents?|what)$", _FLAGS)),
    ("vol", re.compile(r"^(?:vol(?:ume)?|amount)(?:\s*\(?\s*(?:[uµμ]l|ml)\s*\)?)?$", _FLAGS)),
)
_WELLS = re.compile(
    r"^(?:[A-Pa-p]\d{1,2}(?:\s*(?:-|–|:|to|,|and)\s*[A-Pa-p]\d{1,2})*"
    r"|(?:rows?\s+[A-Pa-p]|(?:columns?|cols?)\s+\d{1,2})(?:\s*(?:-|–|to|,|and)\s*(?:[A-Pa-p]|\d{1,2}))*)$",
    _FLAGS,
)
_VOLUME = re.compile(r"^(\d+(?:\.\d+)?|\.\d+)\s*([uµμ][lL]|m[lL])?$")
_PLATE_LINE = re.compile(r"^\s*(?:\(\s*)?(?:on\s+)?(?:plate|labware|destination)?\s*[:=-]?\s*"
                         r"(?P<plate>[\w-]*[\d_][\w-]*)\s*\)?\s*[.:]?\s*$", _FLAGS)  # fmt: skip


def _cells(line: str) -> list[str]:
    return [c.strip() for c in _SEP.split(line.strip().strip("|").strip())]


def _roles(cells: list[str]) -> list[str] | None:
    roles = [next((r for r, rx in _ROLES if rx.match(c.strip())), "") for c in cells]
    return roles if sorted(roles) == ["liquid", "vol", "wells"] else None


def _unit(header: str) -> str:
    return "mL" if re.search(r"\bml\b", header, _FLAGS) else "uL"


_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)])\s+\S")
_PLATE_AFTER = re.compile(
    r"^\s*\(\s*(?:(?:all\s+)?(?:on|in)\s+)?(?P<plate>[\w-]*[\d_][\w-]*)\s*\)\s*\.?\s*$"
)


def layout_rows(text: str) -> str:
    """``text`` with a plate-layout table's rows written as ``- wells: volume liquid`` items,
    and a plate said in brackets on the line after a list ("(plate_1)") as "all on plate_1"."""
    lines = text.split("\n")
    if len(lines) > 2 and _ITEM.match(lines[-2]) and (m := _PLATE_AFTER.match(lines[-1])):
        lines[-1] = f"all on {m['plate']}"
    for i, line in enumerate(lines):
        cells = _cells(line)
        roles = _roles(cells) if len(cells) == 3 else None
        if roles is None:
            continue
        unit = _unit(cells[roles.index("vol")])
        items: list[str] = []
        j = i + 1
        while j < len(lines) and (_RULE.match(lines[j]) and lines[j].strip()):
            j += 1
        while j < len(lines):
            got = dict(zip(roles, _cells(lines[j]), strict=False))
            vol = _VOLUME.match(got.get("vol", ""))
            if len(got) != 3 or not _WELLS.match(got["wells"]) or not got["liquid"] or not vol:
                break
            items.append(f"- {got['wells']}: {vol[1]} {vol[2] or unit} {got['liquid']}")
            j += 1
        if not items:
            continue
        head, rest_start = "", j
        if i and (m := _PLATE_LINE.match(lines[i - 1])):
            head, i = f"{m['plate']}:", i - 1
        elif j < len(lines) and (m := _PLATE_LINE.match(lines[j])):
            head, rest_start = f"{m['plate']}:", j + 1
        before = [ln for ln in lines[:i]]
        if not head and before and before[-1].strip() and not before[-1].rstrip().endswith(":"):
            before[-1] = before[-1].rstrip().rstrip(".") + ":"  # "Fill plate_1 like this" heads
        return "\n".join([*before, *([head] if head else []), *items, *lines[rest_start:]])
    return "\n".join(lines)
