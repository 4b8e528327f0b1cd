"""A worked example of the layout, said in brackets after the work: "50 uL of each into column 3
and again into column 4 (A1 goes to A3 and A4, B1 to B3 and B4, and so on)", "(so A1 -> A7,
B1 -> B7 etc.)", "(e.g. A1 ends up in A3)".

The example asks for nothing of its own: it shows how the wells pair. It is lifted out of the
request before the request is read (its wells would otherwise be read as more places or a
dilution chain), and the finished plan is checked against it: every source well it names must
go to the wells it says. A plan that pairs them otherwise is not handed over; the person is
asked which layout they meant.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.task.planning._outcomes import Ask
from agents.task.planning.models import PlanStep

_FLAGS = re.IGNORECASE
_WELL = r"[A-Pa-p]\d{1,2}"
_GOES = r"(?:goes|go|ends?\s+up|lands?|should\s+go|is\s+going)?\s*(?:to|into|in|->)"
_PAIR = re.compile(
    rf"(?<![\w-])(?P<src>{_WELL})\s+{_GOES}\s+(?P<dst>{_WELL}(?:\s*(?:,|and|&|/|\+)\s*{_WELL}(?!\s+{_GOES}))*)",
    _FLAGS,
)
# The bracket: an example opener or a "so on" closer, and nothing but wells and pairing words.
_BRACKET = re.compile(r"\s*\((?P<body>[^()]*)\)")
_OPENER = re.compile(
    r"^\s*(?:(?:e\.?\s?g|i\.?\s?e)(?:\.|\b)|(?:so|like|for\s+example|for\s+instance|meaning|"
    r"that\s+is)\b)[\s,:]*",
    _FLAGS,
)
_SO_ON = re.compile(r"(?:,?\s*(?:and\s+)?(?:so\s+on|so\s+forth|etc\.?|\.\.\.|…))\s*$", _FLAGS)
_ONLY = re.compile(
    rf"^(?:{_WELL}|{_GOES}|goes|go|ends?|up|lands?|should|and|&|/|\+|,|\s)+$", _FLAGS
)

# "(A1 -> B1 -> C1 etc.)": a dilution's chain, not an example of pairs - left to be read.
_CHAIN = re.compile(rf"{_WELL}\s+{_GOES}\s+{_WELL}\s+{_GOES}\s+{_WELL}", _FLAGS)

Shown = list[tuple[str, list[str]]]


def lift(request: str) -> tuple[str, Shown]:
    """``request`` without its bracketed layout examples, and the pairs they show."""
    shown: Shown = []

    def take(m: re.Match[str]) -> str:
        body = m["body"]
        opened, closed = _OPENER.match(body), _SO_ON.search(body)
        core = body[opened.end() if opened else 0 : closed.start() if closed else len(body)]
        pairs = list(_PAIR.finditer(core))
        if not (opened or closed) or not pairs or not _ONLY.match(core) or _CHAIN.search(core):
            return m.group(0)
        for p in pairs:
            dst = re.findall(_WELL, p["dst"], _FLAGS)
            shown.append((p["src"].upper(), [w.upper() for w in dst]))
        return ""

    return _BRACKET.sub(take, request), shown


def check(shown: Shown, steps: Sequence[PlanStep]) -> None:
    """Ask when the plan does not pair the wells as the example shows."""
    for src, dsts in shown:
        got = [
            w
            for s in steps
            if s.command == "transfer" and s.args.get("source_well") == src
            for w in s.args.get("destination_wells", [])
        ]
        if not set(dsts) <= set(got):
            where = ", ".join(dict.fromkeys(got)) or "nowhere"
            raise Ask(
                f"Your example sends {src} to {' and '.join(dsts)}, but as I read the request "
                f"{src} goes to {where}: which layout did you mean?",
                ["wells"],
                [f"{src} -> {', '.join(dsts)}", f"{src} -> {where}"],
            )
