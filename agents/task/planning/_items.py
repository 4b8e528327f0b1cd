"""The items of a list written on one line: "1. add ...; 2. add ...; 3. read ..." and
"BCA: (a) 25 uL lysate ... (b) 200 uL reagent ... (c) shake ...". The numbers and letters mark
items, not sentences: numbered items become the pieces of one line, lettered ones the lines of
a list under the text before them."""

from __future__ import annotations

import re

from agents.task.planning._fact_pairs import facts_apart

_INLINE_ITEM = re.compile(
    r"(?:^|(?<=[;,.!?:]))\s*\(?(\d{1,2})[.)]\s+(?=[A-Za-z])|^\(?(\d{1,2})\)\s+(?=\d)"
    r"|(?<=\s)\(?(\d{1,2})\)\s+(?=[A-Za-z]|\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])\b)"
    # "Step 1) ... Step 2. ...", "Step 1 - ...": the word before each number
    r"|(?:^|(?<=[\s;,.!?:]))(?i:step)\s*(\d{1,2})\s*[.):-]\s+(?=[A-Za-z]|\d)"
)  # "1) 10 uL master mix -> A1-A4 2) 5 uL water -> A1-A4": items, even before a volume
# "(a) 25 ul lysate ... (b) 200 ul reagent ... (c) shake": lettered items on one line
_LETTERED_ITEM = re.compile(r"(?:^|(?<=\s)|(?<=[;,.:]))\(([a-h])\)\s+(?=\w)")


def inline_items(line: str) -> str:
    """'1. add ...; 2. add ...; 3. read ...' on one line: the numbers mark items, not sentences."""
    found = list(_INLINE_ITEM.finditer(line))
    numbers = [int(next(g for g in m.groups() if g)) for m in found]
    lettered = list(_LETTERED_ITEM.finditer(line))
    if len(lettered) >= 2 and [m.group(1) for m in lettered] == list("abcdefgh"[: len(lettered)]):
        # "Label: (a) ... (b) ...": a list written on one line, each item a line of its own
        cuts = [m.start() for m in lettered] + [len(line)]
        items = [line[m.end() : cuts[k + 1]].strip() for k, m in enumerate(lettered)]
        head = line[: cuts[0]].strip()
        if any(len(item.split()) < 2 for item in items[:-1]):
            return line  # "mix (a) and (b) well": names of things, not items
        return "\n".join(([head] if head else []) + [f"- {item}" for item in items])
    if len(found) < 2 or numbers != list(range(1, len(numbers) + 1)):
        return line
    for m in reversed(found):
        line = line[: m.start()] + ("; " if m.start() else "") + line[m.end() :]
    return line


def lines_of(text: str, names: frozenset[str]) -> list[str]:
    """The request's lines, list items written inline set on lines of their own, and two
    facts joined by "and" ("X is empty and Y has 50 uL") cut apart (``names``: labware ids)."""
    return "\n".join(inline_items(line) for line in facts_apart(text, names).split("\n")).split(
        "\n"
    )
