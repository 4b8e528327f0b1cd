"""Text shown to people on one line (no third-party imports: servers use it too)."""

from __future__ import annotations


def one_line(text: str) -> str:
    """``text`` safe to show on one terminal line: control characters (line breaks, escape
    sequences) and lone surrogates as escapes."""
    return "".join(
        ch
        if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF
        else ch.encode("unicode_escape", "backslashreplace").decode("ascii")
        for ch in text
    )
