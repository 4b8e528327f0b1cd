"""A tip wish said for a kind of liquid rather than its name ("tips can be reused for the
buffer" where the lab's buffer is called PBS): the liquid moves of that kind take it, the
others keep theirs. Only a kind the liquid's own name says is matched (PBS, TBS, HBSS, saline,
"... buffer"), never a guess."""

from __future__ import annotations

import re

_FOR_KIND = re.compile(
    r"\bfor\s+(?:the\s+|all\s+(?:the\s+)?|any\s+)?(?P<kind>buffers?)\b"
    r"(?:\s+(?:additions?|transfers?|steps?|dispenses?))?",
    re.IGNORECASE,
)
_KINDS = {
    "buffer": re.compile(
        r"\b(?:buffers?|d?pbs(?:-?t)?|tbs(?:-?t)?|hbss|saline|te|tris(?:-hcl)?|hepes)\b",
        re.IGNORECASE,
    ),
}


def kind_named(text: str) -> str | None:
    """The kind of liquid a tip wish is said for ("... for the buffer": "buffer"), or None."""
    m = _FOR_KIND.search(text)
    return m.group("kind").lower().rstrip("s") if m else None


def of_kind(kind: str, liquid: str) -> bool:
    """Whether a liquid's name says it is of that kind ("PBS" is a buffer)."""
    rx = _KINDS.get(kind)
    return bool(rx and rx.search(liquid))
