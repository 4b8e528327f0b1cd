"""A dilution's diluent said before the sentence: "Using the standard diluent, make a 2-fold
series of X in A1-H1" is "make a 2-fold series of X in A1-H1 using the standard diluent",
where the dilution reads its diluent ("using", "with"). Only a lead-in naming a liquid (never a
head, tips or a pipette) before a dilution's sentence. Pure text."""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
_LEAD = re.compile(
    r"(?:(?<=^)|(?<=[.;\n]\s)|(?<=\n))(?P<pad>\s*)(?:using|with)\s+(?P<what>[^,.;:\n]{2,40}?)\s*,\s*"
    r"(?P<rest>(?:make|prepare|set\s+up|do|run|perform|create|serially|dilute|please)\b"
    r"(?:[^.;\n]|\.(?=\d))*)",
    _FLAGS,
)
_TOOL = re.compile(r"\b(?:channels?|head|tips?|pipett\w*|multi\w*|robot|arm|p\d+)\b", _FLAGS)
_DILUTION = re.compile(
    r"dilut|\bfold\b|-fold|\bserial|\bcurves?\b|\bstandards?\b|\b1\s*:\s*\d", re.I
)


def using_after(text: str) -> str:
    """``text`` with a diluent said before its dilution's sentence moved to that sentence's end."""
    if not re.search(r"\b(?:using|with)\b", text, _FLAGS):
        return text
    return _LEAD.sub(
        lambda m: (
            m.group(0)
            if _TOOL.search(m["what"]) or not _DILUTION.search(m["rest"])
            else f"{m['pad']}{m['rest'].rstrip()} using {m['what']}"
        ),
        text,
    )
