"""A thermocycling programme written as a table, read as the line a person would say.

Protocols and lab notebooks often give a programme as a table, one step a row::

    Step | Temp | Time | Cycles
    Initial denaturation | 95 C | 3 min | 1
    Denaturation | 95 C | 15 s | 35
    Annealing | 60 C | 30 s | 35
    Final extension | 72 C | 5 min | 1
    Hold | 4 C | forever |

Such a table (rows of cells split by ``|`` or tabs, Markdown rulers and a header allowed)
becomes one line: "Initial denaturation 95 C 3 min; 35 cycles of 95 C 15 s, 60 C 30 s; Final
extension 72 C 5 min; hold at 4 C". Consecutive rows with the same count above one are one
cycled stage, and so are the rows with a blank count right after a cycled row. A table without
a temperature in every row is left as it is.
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
_TEMP = re.compile(r"^-?\d+(?:\.\d+)?\s*(?:°\s*)?(?:c|degrees?(?:\s*c)?)?$", _FLAGS)
_TIME = re.compile(
    r"\d+(?:\.\d+)?\s*(?:s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?)\b|\d+:\d\d",
    _FLAGS,
)
_FOREVER = re.compile(r"^(?:forever|∞|inf(?:inite|inity)?|hold|indefinite(?:ly)?|-+|–|—|)$", _FLAGS)
_COUNT = re.compile(r"^(?:x\s*)?(\d{1,3})(?:\s*x|\s*cycles?)?$", _FLAGS)
_RULER = re.compile(r"^[\s|:+-]+$")
_BLANK = 0  # "| Annealing | 60 C | 30 s | |": no count of its own
_HEAD = {"temp": "temp", "temperature": "temp", "time": "time", "duration": "time", "hold": "time",
         "cycles": "count", "cycle": "count", "repeats": "count", "count": "count", "x": "count",
         "#": "count", "step": "name", "stage": "name", "name": "name"}  # fmt: skip


def _cells(line: str) -> list[str] | None:
    if line.count("|") >= 2 or (line.count("|") == 1 and not line.strip().startswith("|")):
        return [c.strip() for c in line.strip().strip("|").split("|")]
    if "\t" in line:
        return [c.strip() for c in line.split("\t")]
    return None


def _row(cells: list[str], head: dict[int, str]) -> tuple[str, str, str, int] | None:
    """(name, temperature, time, count) of a row, or None when it holds no temperature."""
    name = temp = time = ""
    count = 1
    if any(role == "count" and k >= len(cells) for k, role in head.items()):
        count = _BLANK  # "Anneal | 60 C | 20 s |": the count cell left off the end
    for i, cell in enumerate(cells):
        if head.get(i) == "count" and not cell.strip():
            count = _BLANK  # a blank count under a cycled row: that stage's next step
        role = head.get(i)
        if (role == "temp" or role is None) and _TEMP.match(cell) and not temp and cell:
            temp = re.sub(r"\s*(?:°\s*)?(?:c|degrees?(?:\s*c)?)?$", "", cell, flags=_FLAGS) + " C"
        elif (role == "time" or role is None) and (
            _TIME.search(cell) or (role and _FOREVER.match(cell))
        ):
            time = cell
        elif (role == "count" or role is None) and (m := _COUNT.match(cell)):
            count = int(m.group(1))
        elif role in ("name", None) and cell and not name:
            name = cell
    return (name, temp, time, count) if temp else None


def _said(rows: list[tuple[str, str, str, int]]) -> str:
    parts: list[str] = []
    i = 0
    while i < len(rows):
        name, temp, time, count = rows[i]
        if not _TIME.search(time):
            parts.append(f"hold at {temp}")
            i += 1
            continue
        if count > 1:
            j = i
            while (
                j < len(rows)
                and (rows[j][3] == count or (j > i and rows[j][3] == _BLANK))
                and _TIME.search(rows[j][2])
            ):
                j += 1
            parts.append(f"{count} cycles of " + ", ".join(f"{t} {d}" for _, t, d, _ in rows[i:j]))
            i = j
            continue
        parts.append(f"{name} {temp} {time}".strip())
        i += 1
    return "; ".join(parts)


def programme_tables(text: str) -> str:
    """``text`` with each programme table replaced by its one-line reading."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        block: list[list[str]] = []
        j = i
        while j < len(lines) and ((_RULER.match(lines[j]) and "|" in lines[j]) or _cells(lines[j])):
            if not _RULER.match(lines[j]):
                block.append(_cells(lines[j]) or [])
            j += 1
        if len(block) < 2:
            out.append(lines[i])
            i += 1
            continue
        head: dict[int, str] = {}
        if not any(re.search(r"\d", c) for c in block[0]):
            words = [re.sub(r"[^a-z#].*$", "", c.lower()) for c in block[0]]
            head = {k: _HEAD[w] for k, w in enumerate(words) if w in _HEAD}
            for k, c in enumerate(block[0]):  # "Time (s)": bare numbers in that column
                unit = re.search(r"\((s|sec|min|h)\)", c, _FLAGS)
                if unit is None or head.get(k) != "time":
                    continue
                for cells in block[1:]:
                    if k < len(cells) and re.fullmatch(r"\d+(?:\.\d+)?", cells[k]):
                        cells[k] += f" {unit.group(1)}"
            block = block[1:]
        rows = [_row(cells, head) for cells in block]
        if (
            not rows
            or any(r is None for r in rows)
            or (head and "temp" not in head.values())
            or any(re.fullmatch(r"[A-Pa-p]\d{1,2}", cells[0]) for cells in block if cells)
        ):  # "well | lysate uL | RIPA uL", "A1 | 12.5 | 37.5": volumes by well, no programme
            out.extend(lines[i:j])
        else:
            out.append(_said([r for r in rows if r is not None]))
        i = j
    return "\n".join(out)


# A thermocycler's own listing: numbered steps and a line that sends the block back to an
# earlier step ("5) go to step 2, 29 more times", "GOTO 2 REP 34", "repeat steps 2-4 for 35
# cycles"). A go-to counts the passes after the first (the instruments' convention: "go to step
# 2, 29 times" runs steps 2-4 thirty times); "repeat ... N times" and "for N cycles" count all.
_NUMBERED = re.compile(
    r"^\s*(?:step\s*)?(\d{1,2})\s*[.):]\s*(\S.*)$"
    r"|^\s*step\s*(\d{1,2})\s+-\s+(\S.*)$",  # "Step 2 - 95 C 15 s" (an en dash, normalised)
    _FLAGS,
)
_GOTO = re.compile(
    r"\b(?:go\s*to|goto|back\s+to|return\s+to)\s+(?:step\s*)?(?P<a>\d{1,2})\b\D*?"
    r"(?:(?:rep(?:eat)?|x)\s*)?(?<![\w.])(?P<n>\d{1,3})\s*(?P<more>more\s+)?(?:times|x|cycles?|repeats?)?"
    r"|\brepeat\s+steps?\s+(?P<a2>\d{1,2})\s*(?:-|to|through|thru|and)\s*(?P<b2>\d{1,2})\s*"
    r"(?:for\s+)?(?:an?\s*other\s+|another\s+|a\s+total\s+of\s+)?(?P<n2>\d{1,3})\s*(?P<more2>more\s+)?"
    r"(?:times|x|cycles?)",
    _FLAGS,
)


_STEP_LIKE = re.compile(r"\d\s*(?:°\s*)?(?:c|deg\w*)\b|\d\s*/\s*\d|^\s*\d{1,2}\s+\d", _FLAGS)


def goto_lists(text: str) -> str:
    """``text`` with a numbered programme's go-to line replaced by the cycles it makes."""
    lines = text.split("\n")
    numbered = {
        int(m[1] or m[3]): (i, m[2] or m[4])
        for i, ln in enumerate(lines)
        if (m := _NUMBERED.match(ln))
    }
    for i, line in enumerate(lines):
        go = _GOTO.search(line)
        if go is None or not numbered:
            continue
        first = int(go["a"] or go["a2"])
        own = _NUMBERED.match(line)
        last = int(go["b2"]) if go["b2"] else (int(own[1] or own[3]) - 1 if own else max(numbered))
        if last < first or not all(
            k in numbered and _STEP_LIKE.search(numbered[k][1]) and _TIME.search(numbered[k][1])
            for k in range(first, last + 1)
        ):
            continue  # only temperatures held for a time repeat
        count = int(go["n"] or go["n2"]) + (1 if go["a"] or go["more2"] else 0)
        body = ", ".join(numbered[k][1].strip().rstrip(".;,") for k in range(first, last + 1))
        rows = [numbered[k][0] for k in range(first, last + 1)]
        marker = lines[rows[0]][: len(lines[rows[0]]) - len(numbered[first][1])]
        lines[rows[0]] = f"{marker}{count} cycles of {body}"  # still an item of the list
        gone = {*rows[1:], i}
        return "\n".join(ln for k, ln in enumerate(lines) if k not in gone)
    return text


# "Cycling (x35):" or "35 cycles of" over its steps, one an indented line: one line, "35 cycles
# of 95 C 15 s, 60 C 30 s, 72 C 1 min" (the indent says where the cycled steps end)
_COUNT_LINE = re.compile(
    r"^(?P<pad>[ \t]*)(?:[-*•]\s*)?(?:[A-Za-z][\w -]*?\s*)?(?:\(\s*)?(?:(?:x|×)\s*(?P<a>\d{1,3})"
    r"|(?P<b>\d{1,3})\s*(?:x|×|cycles?|times|rounds?))\s*\)?\s*(?:of|:)?\s*:?\s*$",
    _FLAGS,
)
_STEP_LINE = re.compile(
    r"\d\s*(?:°\s*)?(?:c|deg\w*)\b.*?(?:\d\s*(?:s|sec|m|min|h)\w*\b|\d:\d\d)", _FLAGS
)


def count_blocks(text: str) -> str:
    """``text`` with each count line and the indented steps under it as one line."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = _COUNT_LINE.match(lines[i])
        j = i + 1
        pad = len(m.group("pad").expandtabs(4)) if m else 0
        while m and j < len(lines) and _STEP_LINE.search(lines[j]):
            indent = len(lines[j]) - len(lines[j].lstrip(" \t"))
            if len(lines[j][:indent].expandtabs(4)) <= pad:
                break
            j += 1
        if m is None or j - i < 3:
            out.append(lines[i])
            i += 1
            continue
        steps = ", ".join(ln.strip().lstrip("-*• ").rstrip(",;") for ln in lines[i + 1 : j])
        out.append(f"{m.group('pad')}{m.group('a') or m.group('b')} cycles of {steps}")
        i = j
    return "\n".join(out)
