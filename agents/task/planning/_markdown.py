"""The layout of notebooks and READMEs, read before the words: a markdown heading or a line
that is all bold heads what follows ("## Prep", "**Day 1**"); an indented sub-item that only
qualifies the item above it joins that item, and an item over items of its own heads them; a
tip sentence inside a list item is that item's; a bracketed line of its own is a remark on the
lines before it ("(all on plate_2)").
"""

from __future__ import annotations

import re

# Markdown as notebooks and READMEs write it: "## Prep", "**Day 1**", "__Plate 2__", bold words.
_MD_HEADING = re.compile(r"^\s*#{1,6}\s+(?=\S)")  # "#1" is a number, not a heading
_MD_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_MD_ALONE = re.compile(r"^\s*(?:[-*+]\s+)?(\*\*|__)(?=\S)([^*_\n]+?)(?<=\S)\1\s*:?\s*$")
_LAB_CONTENT = re.compile(r"\d\s*(?:u[lL]|m[lL]|uM|nM|C|rpm|nm)\b|\b[A-Pa-p]\d{1,2}\b")


def markdown_line(line: str) -> str:
    """A markdown heading or a line that is all bold ("## Prep", "**Day 1**") is a heading of
    what follows ("Prep:"); bold elsewhere is only emphasis ("add **50 uL** buffer")."""
    alone = _MD_ALONE.match(line)
    heading = _MD_HEADING.match(line)
    if alone:
        line = alone.group(2)
    elif heading:
        line = line[heading.end() :]
    line = _MD_STRONG.sub(r"\2", line)
    if (alone or heading) and not _LAB_CONTENT.search(line):
        return line.rstrip(" .:") + ":"
    return line


_BULLET = re.compile(
    r"^(?P<indent>[ \t]*)(?:[-*+•◦▪‣]|\(?(?:\d{1,2}|[a-z]|i{1,3}|iv|vi{0,3})[.)])\s+"
)


def nested(text: str) -> str:
    """A sub-item that only qualifies the item above it ("- 50 uL buffer to B1-B12" then,
    indented, "- fresh tip for each well") is part of that item, not a clause for the whole
    request: it joins its parent's line. A sub-item with a volume or wells of its own stays."""
    out: list[str] = []
    parents: list[tuple[int, int]] = []  # (indent, index in out) of the open items
    for line in text.split("\n"):
        m = _BULLET.match(line)
        if m is None:
            if line.strip():
                parents = []
            out.append(line)
            continue
        indent = len(m.group("indent").expandtabs(4))
        while parents and parents[-1][0] >= indent:
            parents.pop()
        child = line[m.end() :].strip()
        if parents and not _LAB_CONTENT.search(child) and _LAB_CONTENT.search(out[parents[-1][1]]):
            at = parents[-1][1]
            out[at] = out[at].rstrip(" .;") + ", " + child
            continue
        if parents and not _LAB_CONTENT.search(head := out[parents[-1][1]]):
            out[parents[-1][1]] = head.rstrip(" .:") + ":"  # "- Plate 1" over its own items
        parents.append((indent, len(out)))
        out.append(line)
    return "\n".join(out)


_HOW_SENTENCE = re.compile(
    r"(?<=[.!])[ \t]+(?=(?:(?:please|and|also)\s+)?(?:use|using|with|change|fresh|new|one|same)\b"
    r"[^.!?\n\d]*\b(?:tips?|channels?|multi-?channel|head)\b[^.!?\n\d]*[.!]?[ \t]*$)",
    re.IGNORECASE,
)


def item_how(line: str) -> str:
    """ "1. Add 50 uL PBS to A1-A6. Use a fresh tip each time.": in a list item, a sentence
    that only says how to use tips or the head belongs to that item, not the whole request."""
    if (bullet := _BULLET.match(line)) is None:
        return line
    # (never the item's own "2." dot: "2. new tips for every column" is the item itself)
    m = next((m for m in _HOW_SENTENCE.finditer(line) if m.start() >= bullet.end()), None)
    return line if m is None else line[: m.start() - 1] + ", " + line[m.end() :]


_BRACKETED_LINE = re.compile(r"^[ \t]*\(([^()\n]+)\)[ \t.]*$", re.MULTILINE)


def bracketed_lines(text: str) -> str:
    """ "(all on plate_2)" on a line of its own: its words, without the brackets."""
    return _BRACKETED_LINE.sub(r"\1", text)


# A line that stops on a word no sentence ends on ("First the product from" / "pcr_cleanup
# (same row), then ..."): text wrapped at a fixed width, the sentence goes on below.
_DANGLING = re.compile(
    r"\b(?:from|to|into|onto|of|with|in|on|at|for|by|the|a|an|and|or|then|per|using|plus)\s*$",
    re.IGNORECASE,
)
_NEXT_ITEM = re.compile(r"^\s*(?:[-*+•>]|\(?\d{1,2}[.):]|\(?[a-h]\))\s")


def unwrapped(text: str) -> str:
    """``text`` with the lines that a fixed width broke mid-sentence joined again."""
    lines = text.split("\n")
    out: list[str] = []
    for line in lines:
        if out and _DANGLING.search(out[-1]) and line.strip() and not _NEXT_ITEM.match(line):
            out[-1] = out[-1].rstrip() + " " + line.strip()
            continue
        out.append(line)
    return "\n".join(out)
