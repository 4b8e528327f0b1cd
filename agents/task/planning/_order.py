"""The order steps run in when "before" and "after" tell it, not the order they are told.

"X, after filling Y" and "X after incubating it 30 min" run Y first; "X before reading Y" and
"Before reading Y, X" run X first; "read at 570 nm after 30 min at 37 C" waits first. A
sentence is rewritten into its pieces in run order, joined by semicolons, for the splitter; a
move told in two halves ("take X out of the reader and put it in hotel 2") becomes one.
"""

from __future__ import annotations

import re

from agents.task.planning import _social
from agents.task.planning._off_bench import OFF_BENCH

_FLAGS = re.IGNORECASE
# words in -ing that are no verb ("before anything else" says nothing of what runs after)
_NO_VERB = r"(?!(?:any|every|some|no)thing\b|morning\b|evening\b|during\b)"
# "X, after filling Y": Y happens first.
_AFTER = re.compile(rf"\s*,?\s+after\s+{_NO_VERB}(?=\w+ing\b\s*[^\s,.;])", _FLAGS)
# "X before reading Y": X, then Y; "Before reading Y, X": X first too.
_BEFORE = re.compile(rf"\s*,?\s+before\s+{_NO_VERB}(?=\w+ing\b\s*[^\s,.;])", _FLAGS)
_BEFORE_LEAD = re.compile(rf"^before\s+{_NO_VERB}(\w+ing\b[^,;]*),\s*(.+)$", _FLAGS)
# "read at 570 nm after 30 min at 37 C": the wait first.
_AFTER_WAIT = re.compile(
    r"\s*,?\s+after\s+(?:a\s+|another\s+)?(?=(?:\d+(?:\.\d+)?|an?|one|two|five|ten)\s*-?\s*"
    r"(?:h|hrs?|hours?|min|mins|minutes?|s|secs?|seconds?)\b(?:\s+(?:at|@)\s+[^,;]*)?\s*$)",
    _FLAGS,
)


_SPAN = (
    r"(?:\d+(?:\.\d+)?|an?|one|two|five|ten)\s*-?\s*(?:h|hrs?|hours?|min|mins|minutes?|s|secs?|"
    r"seconds?)\b(?:\s+(?:at|@)\s+(?:-?\d+(?:\.\d+)?\s*(?:°\s*)?C\b|RT\b|room\s+temp\w*))?"
)
# "read it at 450 nm 15 min later", "after 15 min read at 450 nm": the wait first too.
_LATER = re.compile(rf"\s*,?\s+(?P<t>{_SPAN})\s+later\s*$", _FLAGS)
_AFTER_LEAD = re.compile(
    rf"^(?:and\s+|then\s+)?after\s+(?:a\s+|another\s+)?(?P<t>{_SPAN})\s*,?\s+(?P<rest>\w.*)$",
    _FLAGS,
)
# "mix 5x after adding the serum": the addition the sentence already tells, no step of its own
_AFTER_ADDING_IT = re.compile(
    r"\s*,?\s+(?:after|once|when)\s+(?:adding|dispensing|pipetting|the\s+addition\s+of)\s+"
    r"(?:the\s+|each\s+|every\s+)?(?P<what>[^\d,;.()]+?)\s*(?=$|[,;.)])",
    _FLAGS,
)
_ING = {"reading": "read", "measuring": "measure", "shaking": "shake", "incubating": "incubate",
        "adding": "add", "mixing": "mix", "moving": "move", "scanning": "scan"}  # fmt: skip


def _base_verb(text: str) -> str:
    """'reading it at 450 nm' -> 'read it at 450 nm': the clause a "before ..." names."""
    first, _, rest = text.partition(" ")
    return f"{_ING.get(first.lower(), first)} {rest}".strip()


# "... 60 C 1 min (read fluorescence at the end)": a step of its own, told in brackets.
_BRACKETED_STEP = re.compile(
    r"\s*\((?=(?:and\s+|then\s+)?(?:read|measure|shake|incubate|move|park|scan|unload)\b)"
    r"([^()]*)\)",
    _FLAGS,
)


# "take the plate out of the cycler and put it in hotel 2": one move, told in two halves.
_OUT_AND_IN = re.compile(
    r"\b(?:take|remove|get|pull|lift)\s+(?P<x>.+?)\s+(?:out\s+of|off(?:\s+of)?|from)\s+"
    r"(?:the\s+)?[\w-]+(?:\s+(?:block|drawer|holder))?\s*(?:,\s*)?(?:and\s+|then\s+)+"
    r"(?:put|place|move|set|park|stash|return)\s+(?:it|them)\b",
    _FLAGS,
)


# Where the last action of a sentence starts ("add ... and read it after 5 min": the read).
_LAST_ACTION = re.compile(
    r"(?:[,;]\s*|\s+)(?:and\s+|then\s+)*(?=(?:read|measure|scan|shake|add|transfer|dispense|move"
    r"|incubate|mix|put|take|spin|cycle|run)\b)",
    _FLAGS,
)


def _first(part: str, said_at: int, first: str) -> str:
    """``first`` run just before the last action told before ``said_at`` in ``part``."""
    head, cut = part[:said_at], 0
    for m in _LAST_ACTION.finditer(head):
        cut = m.end() if m.start() > 0 else cut
    return f"{head[:cut]}; {first}; {head[cut:]}" if cut else f"{first}; {head}"


def run_order(part: str) -> str:
    """``part`` rewritten with its pieces in the order they run, or as it is."""
    if OFF_BENCH.match(part.strip()):
        return part  # "predict the OD of X after 2 h": the time is the other work's, no wait
    part = _OUT_AND_IN.sub(lambda m: f"move {m['x']}", part)
    if (step := _BRACKETED_STEP.search(part)) is not None:
        part = f"{part[: step.start()]}{part[step.end() :]}; {step.group(1)}"
    told = _AFTER_ADDING_IT.search(part)
    if told is not None and re.search(
        rf"\b{re.escape(told['what'])}\b", part[: told.start()], _FLAGS
    ):
        part = part[: told.start()] + part[told.end() :]
    if (after := _AFTER.search(part)) is not None:
        return _first(part, after.start(), part[after.end() :])
    tail = _social.TAIL.search(part)  # "... after 5 min, thanks!": the wait ends the action
    core = (part[: tail.start()] if tail and tail.start() > 0 else part).rstrip(" .!")
    if (wait := _AFTER_WAIT.search(core)) is not None:
        return _first(core, wait.start(), f"wait {core[wait.end() :]}")
    if (later := _LATER.search(core)) is not None:
        done = _first(core, later.start(), f"wait {later['t']}")
        return re.sub(r"\s+(?:and|then)\s*;", ";", done)
    pieces = [_AFTER_LEAD.match(x.strip()) for x in core.split(";")]
    if any(pieces):  # "...; after 15 min read at 450 nm"
        return "; ".join(
            f"wait {m['t']}; {m['rest']}" if m else x.strip()
            for m, x in zip(pieces, core.split(";"), strict=True)
        )
    if (lead := _BEFORE_LEAD.match(part)) is not None:
        return f"{lead.group(2)}; {_base_verb(lead.group(1))}"
    if (before := _BEFORE.search(part)) is not None:
        return f"{part[: before.start()]}; {_base_verb(part[before.end() :])}"
    return part


# "Read quant2 at 595 nm. Before anything else, mix stdblk A1.": that sentence runs first.
_FIRST_OF_ALL = re.compile(
    r"(?:(?<=[.!?])[ \t]+|\n[ \t]*)"
    r"(?P<s>(?:before\s+(?:anything|everything)\s+else|first\s+of\s+all"
    r"|first\s+things?\s+first)\b[^\n]*?(?:[.!?](?=\s|$)|$))",
    _FLAGS,
)


def said_first(text: str) -> str:
    """``text`` with a later sentence that says it comes "before anything else" told first."""
    m = _FIRST_OF_ALL.search(text)
    if m is None:
        return text
    rest = (text[: m.start()] + text[m.end() :]).strip()
    said = m["s"].rstrip()
    return f"{said}{'' if said.endswith(('.', '!', '?')) else '.'}\n{rest}"
